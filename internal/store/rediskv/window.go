package rediskv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svc-gateway/svc/internal/store"
)

// ErrCrossSlot is returned by Admit when its keys would not all hash to one
// Redis Cluster slot: they need one hash tag ({…}).
var ErrCrossSlot = errors.New("rediskv: the keys of one operation do not share a hash tag")

// A sliding window at key is two Redis keys: a sorted set of admitted entries
// (windowKeys' z), scored by the admission time in microseconds of the Redis
// server's clock (TIME, which every replica shares), each member
// "<nonce>:<cost>" with a random nonce per call so members are unique; and
// the sum of their costs (s), so a call costs O(log n + entries leaving the
// window) rather than a scan. A member is the entry's id (WindowResult.Entry).

// pruneLua defines prune(z, s, cutoff): it removes the entries of the window
// (z, s) scored at or before cutoff, subtracting their costs from the sum, and
// returns the sum of the rest; a missing sum (first call, eviction) is rebuilt
// from the entries.
const pruneLua = `
local function prune(zkey, skey, cutoff)
	local used = 0
	local s = redis.call('GET', skey)
	if s and redis.call('EXISTS', zkey) == 1 then
		used = tonumber(s)
		local old = redis.call('ZRANGEBYSCORE', zkey, '-inf', cutoff)
		if #old > 0 then
			local gone = 0
			for _, m in ipairs(old) do
				gone = gone + tonumber(string.match(m, ':(%d+)$'))
			end
			redis.call('ZREMRANGEBYSCORE', zkey, '-inf', cutoff)
			used = redis.call('DECRBY', skey, gone)
		end
	else
		redis.call('ZREMRANGEBYSCORE', zkey, '-inf', cutoff)
		for _, m in ipairs(redis.call('ZRANGE', zkey, 0, -1)) do
			used = used + tonumber(string.match(m, ':(%d+)$'))
		end
		redis.call('SET', skey, used)
	end
	return used
end

-- finish sets the window's expiry (ms) and returns its reset-in (µs), 0 and
-- no keys when it is empty.
local function finish(zkey, skey, now, win, winms)
	local first = redis.call('ZRANGE', zkey, 0, 0, 'WITHSCORES')
	if #first == 0 then
		redis.call('DEL', skey)
		return 0
	end
	redis.call('PEXPIRE', zkey, winms)
	redis.call('PEXPIRE', skey, winms)
	local reset = tonumber(first[2]) + win - now
	if reset < 0 then reset = 0 end
	return reset
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
`

// admitScript is Admit (and Window): n windows and an optional reservation,
// all or nothing, run atomically in Redis.
//
// KEYS: z1, s1, …, zn, sn, then the reservation's counter when there is one.
// ARGV: n, nonce, then per window its window (µs), limit, cost and window
// (ms), then the reservation's amount, cap and ttl (ms, 0: none).
// The reply is {allowed, reserved, total, then per window allowed, used,
// reset-in µs}.
var admitScript = redis.NewScript(pruneLua + `
local n = tonumber(ARGV[1])
local nonce = ARGV[2]
local ok = 1
local out = {0, 1, 0}
for i = 1, n do
	local a = 2 + (i - 1) * 4
	local limit, cost = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
	local used = prune(KEYS[2 * i - 1], KEYS[2 * i], now - tonumber(ARGV[a + 1]))
	local allowed = 0
	if cost <= limit and used <= limit - cost then allowed = 1 else ok = 0 end
	out[4 + (i - 1) * 3] = allowed
	out[5 + (i - 1) * 3] = used
	out[6 + (i - 1) * 3] = 0 -- no holes: a reply array ends at the first nil
end
local rkey = KEYS[2 * n + 1]
local cur, s
if rkey then
	local r = 2 + n * 4
	local amount, cap = tonumber(ARGV[r + 1]), tonumber(ARGV[r + 2])
	s = redis.call('GET', rkey)
	cur = 0
	if s then
		cur = tonumber(s)
		if cur == nil then
			return redis.error_reply('ERR value is not an integer or out of range')
		end
	end
	if cap > 0 and (cur >= cap or cur + amount > cap) then
		out[2] = 0
		ok = 0
	end
	out[3] = cur
end
out[1] = ok
if ok == 1 then
	if rkey then
		local r = 2 + n * 4
		out[3] = redis.call('INCRBY', rkey, ARGV[r + 1])
		local ttl = tonumber(ARGV[r + 3])
		if not s and ttl > 0 then
			redis.call('PEXPIRE', rkey, ttl)
		end
	end
	for i = 1, n do
		local a = 2 + (i - 1) * 4
		if tonumber(ARGV[a + 3]) > 0 then
			redis.call('ZADD', KEYS[2 * i - 1], now, nonce .. ':' .. ARGV[a + 3])
			out[5 + (i - 1) * 3] = redis.call('INCRBY', KEYS[2 * i], ARGV[a + 3])
		end
	end
end
for i = 1, n do
	local a = 2 + (i - 1) * 4
	out[6 + (i - 1) * 3] = finish(KEYS[2 * i - 1], KEYS[2 * i], now, tonumber(ARGV[a + 1]), ARGV[a + 4])
end
return out
`)

// settleScript is Settle. KEYS: z1, s1, …, zn, sn, then the counter when
// there is one. ARGV: n, a fresh nonce, then per window its window (µs),
// window (ms), the entry's member ("" for none), the entry's nonce, its
// original cost and the new cost, then the counter's delta and ttl (ms).
// The reply is {total, then per window used, reset-in µs, found (0/1)}.
var settleScript = redis.NewScript(pruneLua + `
local n = tonumber(ARGV[1])
local rkey = KEYS[2 * n + 1]
local s
if rkey then
	s = redis.call('GET', rkey)
	if s and tonumber(s) == nil then
		return redis.error_reply('ERR value is not an integer or out of range')
	end
end
local out = {0}
for i = 1, n do
	local a = 2 + (i - 1) * 6
	local zkey, skey = KEYS[2 * i - 1], KEYS[2 * i]
	local win = tonumber(ARGV[a + 1])
	local used = prune(zkey, skey, now - win)
	local member, id = ARGV[a + 3], ARGV[a + 4]
	local orig, cost = tonumber(ARGV[a + 5]), tonumber(ARGV[a + 6])
	local found = 0
	local score = nil
	if member ~= '' then score = redis.call('ZSCORE', zkey, member) end
	if score then
		found = 1
		redis.call('ZREM', zkey, member)
		if cost > 0 then
			redis.call('ZADD', zkey, score, id .. ':' .. ARGV[a + 6])
		end
		used = redis.call('INCRBY', skey, cost - orig)
	elseif cost > orig then
		redis.call('ZADD', zkey, now, ARGV[2] .. ':' .. (cost - orig))
		used = redis.call('INCRBY', skey, cost - orig)
	end
	out[2 + (i - 1) * 3] = used
	out[3 + (i - 1) * 3] = finish(zkey, skey, now, win, ARGV[a + 2])
	out[4 + (i - 1) * 3] = found
end
if rkey then
	local r = 2 + n * 6
	out[1] = redis.call('INCRBY', rkey, ARGV[r + 1])
	local ttl = tonumber(ARGV[r + 2])
	if not s and ttl > 0 then
		redis.call('PEXPIRE', rkey, ttl)
	end
end
return out
`)

// windowKeys returns the sorted set and sum keys of the window at key. A key
// that carries its own hash tag keeps it (so Admit can put several windows
// and a counter in one slot); any other key is made its own tag.
func (kv *KV) windowKeys(key string) (z, s string) {
	tagged := kv.prefix + key
	if !hasTag(key) {
		tagged = kv.prefix + "{" + key + "}"
	}
	return tagged + ":w", tagged + ":s"
}

// hasTag reports whether key contains a Redis Cluster hash tag: a "{"
// followed, later, by a "}" with something between them.
func hasTag(key string) bool {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return false
	}
	j := strings.IndexByte(key[i+1:], '}')
	return j > 0
}

// slotKey returns the part of a Redis key that Redis Cluster hashes: the
// first hash tag's content, else the whole key.
func slotKey(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// nonce returns a random member prefix.
func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b[:])
}

// Window admits cost into the sliding window at key: Admit with this one
// window. Exact (each admitted cost is an entry stamped with the Redis
// server's clock, in microseconds) and bounded in memory by the entries
// admitted within one window; both Redis keys expire window after the last
// call that left entries.
func (kv *KV) Window(ctx context.Context, key string, window time.Duration, limit, cost int64) (store.WindowResult, error) {
	r, err := kv.Admit(ctx, store.AdmitRequest{Windows: []store.WindowCheck{{Key: key, Window: window, Limit: limit, Cost: cost}}})
	if err != nil {
		return store.WindowResult{}, err
	}
	return r.Windows[0], nil
}

// checkWindow validates one window's parameters.
func checkWindow(key string, window time.Duration, cost int64) error {
	if cost < 0 {
		return fmt.Errorf("rediskv: window %q: negative cost %d", key, cost)
	}
	if window <= 0 {
		return fmt.Errorf("rediskv: window %q: window %v is not positive", key, window)
	}
	return nil
}

// Admit runs every window and the reservation in one Lua script
// (admitScript, sent by EVALSHA from Redis's script cache): one round trip,
// atomic. Every Redis key must hash to one Cluster slot (ErrCrossSlot
// otherwise): give the keys one hash tag, or the prefix one.
func (kv *KV) Admit(ctx context.Context, req store.AdmitRequest) (store.AdmitResult, error) {
	if err := kv.check(ctx); err != nil {
		return store.AdmitResult{}, err
	}
	n := len(req.Windows)
	keys := make([]string, 0, 2*n+1)
	args := make([]any, 0, 2+4*n+3)
	nc := nonce()
	args = append(args, n, nc)
	for _, w := range req.Windows {
		if err := checkWindow(w.Key, w.Window, w.Cost); err != nil {
			return store.AdmitResult{}, err
		}
		z, s := kv.windowKeys(w.Key)
		keys = append(keys, z, s)
		args = append(args, max(1, w.Window.Microseconds()), w.Limit, w.Cost, ms(w.Window))
	}
	if rs := req.Reserve; rs != nil {
		if rs.Amount < 0 {
			return store.AdmitResult{}, fmt.Errorf("rediskv: admit: negative reservation %d on %q", rs.Amount, rs.Key)
		}
		keys = append(keys, kv.key(rs.Key))
		args = append(args, rs.Amount, rs.Cap, ms(rs.TTL))
	}
	if len(keys) == 0 {
		return store.AdmitResult{Allowed: true, Reserved: true, Windows: []store.WindowResult{}}, nil
	}
	if err := sameSlot(keys); err != nil {
		return store.AdmitResult{}, fmt.Errorf("rediskv: admit: %w", err)
	}
	vals, err := admitScript.Run(ctx, kv.client, keys, args...).Int64Slice()
	if err != nil {
		return store.AdmitResult{}, fmt.Errorf("rediskv: admit: %w", err)
	}
	if len(vals) != 3+3*n {
		return store.AdmitResult{}, fmt.Errorf("rediskv: admit: script answered %d values, want %d", len(vals), 3+3*n)
	}
	res := store.AdmitResult{Allowed: vals[0] == 1, Reserved: vals[1] == 1, Total: vals[2], Windows: make([]store.WindowResult, n)}
	for i, w := range req.Windows {
		v := vals[3+3*i:]
		r := store.WindowResult{Allowed: v[0] == 1, Used: v[1], Limit: w.Limit, ResetIn: time.Duration(v[2]) * time.Microsecond}
		if res.Allowed && w.Cost > 0 {
			r.Entry = nc + ":" + strconv.FormatInt(w.Cost, 10)
		}
		res.Windows[i] = r
	}
	if req.Reserve == nil {
		res.Total = 0
	}
	return res, nil
}

// Settle rewrites window entries and adjusts a counter in one Lua script
// (settleScript); see store.KV.Settle. An entry's member is replaced by one
// with the same nonce and score and the new cost, or removed for cost 0.
// Every Redis key must hash to one Cluster slot, as for Admit.
func (kv *KV) Settle(ctx context.Context, req store.SettleRequest) (store.SettleResult, error) {
	if err := kv.check(ctx); err != nil {
		return store.SettleResult{}, err
	}
	n := len(req.Windows)
	keys := make([]string, 0, 2*n+1)
	nc := nonce()
	args := make([]any, 0, 2+6*n+2)
	args = append(args, n, nc)
	ids := make([]string, n)
	origs := make([]int64, n)
	for i, a := range req.Windows {
		if err := checkWindow(a.Key, a.Window, a.Cost); err != nil {
			return store.SettleResult{}, err
		}
		if a.Entry != "" {
			id, c, ok := strings.Cut(a.Entry, ":")
			orig, err := strconv.ParseInt(c, 10, 64)
			if !ok || err != nil || id == "" || orig < 0 {
				return store.SettleResult{}, fmt.Errorf("rediskv: settle %q: malformed entry %q", a.Key, a.Entry)
			}
			ids[i], origs[i] = id, orig
		}
		z, s := kv.windowKeys(a.Key)
		keys = append(keys, z, s)
		args = append(args, max(1, a.Window.Microseconds()), ms(a.Window), a.Entry, ids[i], origs[i], a.Cost)
	}
	if c := req.Counter; c != nil {
		keys = append(keys, kv.key(c.Key))
		args = append(args, c.Delta, ms(c.TTL))
	}
	if len(keys) == 0 {
		return store.SettleResult{Windows: []store.WindowResult{}}, nil
	}
	if err := sameSlot(keys); err != nil {
		return store.SettleResult{}, fmt.Errorf("rediskv: settle: %w", err)
	}
	vals, err := settleScript.Run(ctx, kv.client, keys, args...).Int64Slice()
	if err != nil {
		return store.SettleResult{}, fmt.Errorf("rediskv: settle: %w", err)
	}
	if len(vals) != 1+3*n {
		return store.SettleResult{}, fmt.Errorf("rediskv: settle: script answered %d values, want %d", len(vals), 1+3*n)
	}
	res := store.SettleResult{Total: vals[0], Windows: make([]store.WindowResult, n)}
	for i, a := range req.Windows {
		v := vals[1+3*i:]
		r := store.WindowResult{Allowed: true, Used: v[0], Limit: 1<<63 - 1, ResetIn: time.Duration(v[1]) * time.Microsecond}
		switch {
		case v[2] == 1 && a.Cost > 0:
			r.Entry = ids[i] + ":" + strconv.FormatInt(a.Cost, 10)
		case v[2] == 0 && a.Cost > origs[i]:
			r.Entry = nc + ":" + strconv.FormatInt(a.Cost-origs[i], 10)
		}
		res.Windows[i] = r
	}
	return res, nil
}

// sameSlot returns ErrCrossSlot unless every key hashes to one Cluster slot.
func sameSlot(keys []string) error {
	for _, k := range keys[1:] {
		if slotKey(k) != slotKey(keys[0]) {
			return fmt.Errorf("%q and %q: %w", keys[0], k, ErrCrossSlot)
		}
	}
	return nil
}
