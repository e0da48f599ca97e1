package rediskv

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svc-gateway/svc/internal/store"
)

// Streams (store.Streams) are Redis streams drained by a consumer group:
// XADD appends, XREADGROUP delivers, XAUTOCLAIM takes over the entries of a
// consumer that stopped reading, XACK acknowledges, and one Lua script trims
// only what the group acknowledged. A stream's value is in the entry field
// logField, as AppendLog's. Streams never expire.
//
// Every call touches one Redis key (the stream; the group lives inside it),
// so streams work on Redis Cluster unchanged, with no hash tag. They need
// Redis ≥ 6.2 (XAUTOCLAIM, exclusive ranges); Redis ≥ 7 also reports a
// group's lag, which StreamInfo uses for Undelivered.

const (
	// trimBudget bounds the entries the MaxLen cut of one StreamTrim call
	// examines, and so removes: the script reads them to find the cut, and
	// Redis serves nobody else while a script runs. A later call continues.
	trimBudget = 10000
	// countBudget bounds the undelivered entries StreamInfo counts itself
	// when Redis does not know the group's lag (Redis < 7, or entries
	// deleted by XDEL after the group's last delivery).
	countBudget = 10000
	// claimRounds bounds the XAUTOCLAIM scans of one StreamRead (each scans
	// at most ten times the entries it may claim).
	claimRounds = 8
)

// trimScript removes acknowledged entries beyond the limits from the stream
// KEYS[1] for the group ARGV[1]: older than ARGV[2] ms (0: no age limit) or
// the oldest beyond ARGV[3] entries (0: no length limit), of which it
// examines at most ARGV[4]. Entries before "safe" are acknowledged: safe is
// the group's oldest pending entry or, with none pending, the first entry
// after its last delivery (nil: there is none, every entry is acknowledged).
// Without the stream or the group it removes nothing. It replies with the
// number of entries removed.
var trimScript = redis.NewScript(`
local function split(id)
	local ms, seq = string.match(id, '^(%d+)-(%d+)$')
	return tonumber(ms), tonumber(seq)
end
-- before reports whether ID a sorts before ID b; nil stands past the end.
local function before(a, b)
	if b == nil then return a ~= nil end
	if a == nil then return false end
	local am, as = split(a)
	local bm, bs = split(b)
	if am ~= bm then return am < bm end
	return as < bs
end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local last
for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
	local f = {}
	for i = 1, #g, 2 do f[g[i]] = g[i + 1] end
	if f['name'] == ARGV[1] then last = f['last-delivered-id'] end
end
if not last then return 0 end
local safe
local p = redis.call('XPENDING', KEYS[1], ARGV[1])
if p[1] > 0 then
	safe = p[2]
else
	local nxt = redis.call('XRANGE', KEYS[1], '(' .. last, '+', 'COUNT', 1)
	if #nxt > 0 then safe = nxt[1][1] end
end
local cut = '0-0'
local maxAge = tonumber(ARGV[2])
if maxAge > 0 then
	local t = redis.call('TIME')
	local bound = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - maxAge
	if bound > 0 then cut = string.format('%.0f-0', bound) end
end
local maxLen = tonumber(ARGV[3])
if maxLen > 0 then
	local over = redis.call('XLEN', KEYS[1]) - maxLen
	if over > 0 then
		local k = math.min(over, tonumber(ARGV[4]))
		local stop = '+'
		if safe then stop = '(' .. safe end
		local r = redis.call('XRANGE', KEYS[1], '-', stop, 'COUNT', k + 1)
		local lenCut = safe
		if #r > k then lenCut = r[k + 1][1] end
		if before(cut, lenCut) then cut = lenCut end
	end
end
if before(safe, cut) then cut = safe end
if cut == nil then
	return redis.call('XTRIM', KEYS[1], 'MAXLEN', '=', 0)
end
return redis.call('XTRIM', KEYS[1], 'MINID', '=', cut)
`)

// countScript counts the entries of the stream KEYS[1] after the ID ARGV[1],
// up to ARGV[2], without sending them over the network.
var countScript = redis.NewScript(`
local n, cap, start = 0, tonumber(ARGV[2]), '(' .. ARGV[1]
while n < cap do
	local want = math.min(1000, cap - n)
	local r = redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', want)
	n = n + #r
	if #r < want then break end
	start = '(' .. r[#r][1]
end
return n
`)

// StreamAppend appends values, in order, to the stream at key: one XADD
// each, in one MULTI/EXEC, so that a batch is appended whole or not at all
// (an error whose reply was lost excepted). It never trims; nil values are
// stored empty. With no values it does nothing.
func (kv *KV) StreamAppend(ctx context.Context, key string, values ...[]byte) error {
	if err := kv.check(ctx); err != nil {
		return err
	}
	if len(values) == 0 {
		return nil
	}
	k := kv.key(key)
	_, err := kv.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, v := range values {
			if v == nil {
				v = []byte{}
			}
			p.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []any{logField, v}})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rediskv: stream append %q: %w", key, err)
	}
	return nil
}

// StreamRead delivers up to count (> 0) entries to consumer of group,
// creating the group at the stream's start (XGROUP CREATE … 0 MKSTREAM)
// when Redis reports it missing: the consumer's pending entries (XREADGROUP
// from 0; an entry deleted while pending is acknowledged and skipped), then
// entries idle for at least claimIdle in other consumers' lists
// (XAUTOCLAIM; claimIdle ≤ 0 claims none), then new entries (XREADGROUP >),
// blocking up to block for some when there are none (rounded up to whole
// milliseconds, shortened to ctx's deadline; 0: no wait). A cancelled ctx
// does not interrupt a blocked read, so keep block short. An entry not
// written by StreamAppend (without the value field) is delivered with a nil
// Value rather than as an error, so that it cannot stop the drain.
//
// An entry claimed from a consumer that is in fact alive is delivered twice
// (at least once): claimIdle must exceed the time a consumer takes between
// reading an entry and acknowledging it.
func (kv *KV) StreamRead(ctx context.Context, key, group, consumer string, count int, claimIdle, block time.Duration) ([]store.StreamEntry, error) {
	if err := kv.check(ctx); err != nil {
		return nil, err
	}
	if count <= 0 {
		return nil, fmt.Errorf("rediskv: stream read %q: count %d, want > 0", key, count)
	}
	r := &streamReader{kv: kv, key: kv.key(key), group: group, consumer: consumer, count: count}
	out, err := r.read(ctx, claimIdle, block)
	if redis.HasErrorPrefix(err, "NOGROUP") {
		if err = kv.createGroup(ctx, r.key, group); err == nil {
			out, err = r.read(ctx, claimIdle, block)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("rediskv: stream read %q: %w", key, err)
	}
	return out, nil
}

// createGroup creates group at the start of the stream k (and the stream);
// a group that exists already is not an error.
func (kv *KV) createGroup(ctx context.Context, k, group string) error {
	err := kv.client.XGroupCreateMkStream(ctx, k, group, "0").Err()
	if err != nil && !redis.HasErrorPrefix(err, "BUSYGROUP") {
		return fmt.Errorf("create group: %w", err)
	}
	return nil
}

// streamReader is one StreamRead call.
type streamReader struct {
	kv                   *KV
	key, group, consumer string
	count                int
	out                  []store.StreamEntry
}

func (r *streamReader) read(ctx context.Context, claimIdle, block time.Duration) ([]store.StreamEntry, error) {
	r.out = nil
	if err := r.own(ctx); err != nil || r.full() {
		return r.out, err
	}
	if claimIdle > 0 {
		if err := r.claim(ctx, claimIdle); err != nil || r.full() {
			return r.out, err
		}
	}
	return r.out, r.fresh(ctx, block)
}

func (r *streamReader) full() bool { return len(r.out) >= r.count }

// own adds the consumer's pending entries, oldest first.
func (r *streamReader) own(ctx context.Context) error {
	start := "0"
	for !r.full() {
		want := r.count - len(r.out)
		res, err := r.kv.client.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: r.group, Consumer: r.consumer, Streams: []string{r.key, start},
			Count: int64(want), Block: -1, // -1: no BLOCK argument
		}).Result()
		if errors.Is(err, redis.Nil) {
			return nil
		}
		if err != nil {
			return err
		}
		msgs := messages(res)
		if err := r.add(ctx, msgs, nil); err != nil {
			return err
		}
		if len(msgs) < want {
			return nil
		}
		start = msgs[len(msgs)-1].ID
	}
	return nil
}

// claim adds entries idle for at least idle in other consumers' lists,
// oldest first. XAUTOCLAIM may also return the consumer's own entries,
// which own has just delivered: they are not added twice.
func (r *streamReader) claim(ctx context.Context, idle time.Duration) error {
	seen := make(map[string]bool, len(r.out))
	for _, e := range r.out {
		seen[e.ID] = true
	}
	start := "0-0"
	for range claimRounds {
		msgs, next, err := r.kv.client.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: r.key, Group: r.group, Consumer: r.consumer,
			MinIdle: time.Duration(ms(idle)) * time.Millisecond,
			Start:   start, Count: int64(r.count - len(r.out)),
		}).Result()
		if err != nil {
			return err
		}
		if err := r.add(ctx, msgs, seen); err != nil {
			return err
		}
		if r.full() || next == "0-0" {
			return nil
		}
		start = next
	}
	return nil
}

// fresh adds entries never delivered to the group, waiting up to block.
func (r *streamReader) fresh(ctx context.Context, block time.Duration) error {
	if dl, ok := ctx.Deadline(); ok {
		block = min(block, time.Until(dl))
	}
	args := &redis.XReadGroupArgs{
		Group: r.group, Consumer: r.consumer, Streams: []string{r.key, ">"},
		Count: int64(r.count - len(r.out)), Block: -1,
	}
	if block > 0 {
		// Never 0: BLOCK 0 waits forever.
		args.Block = time.Duration(ms(block)) * time.Millisecond
	}
	res, err := r.kv.client.XReadGroup(ctx, args).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return err
	}
	return r.add(ctx, messages(res), nil)
}

// add appends msgs to the result, skipping those in seen. An entry deleted
// while pending (Redis answers its ID with no fields) is acknowledged, so
// it leaves the pending list, and skipped.
func (r *streamReader) add(ctx context.Context, msgs []redis.XMessage, seen map[string]bool) error {
	var gone []string
	for _, m := range msgs {
		switch {
		case m.Values == nil:
			gone = append(gone, m.ID)
		case !seen[m.ID]:
			r.out = append(r.out, streamEntry(m))
		}
	}
	if len(gone) == 0 {
		return nil
	}
	return r.kv.client.XAck(ctx, r.key, r.group, gone...).Err()
}

// messages returns the entries of the one stream an XREADGROUP named.
func messages(res []redis.XStream) []redis.XMessage {
	if len(res) == 0 {
		return nil
	}
	return res[0].Messages
}

func streamEntry(m redis.XMessage) store.StreamEntry {
	e := store.StreamEntry{ID: m.ID, Time: idTime(m.ID)}
	if s, ok := m.Values[logField].(string); ok {
		e.Value = []byte(s)
	}
	return e
}

// idTime is the time of a stream ID "<ms>-<seq>" (zero if it has none).
func idTime(id string) time.Time {
	msPart, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseInt(msPart, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// StreamAck acknowledges ids in group (XACK). Unknown IDs, a missing group
// or stream are not errors; an ID that is not of Redis's "<ms>-<seq>" form
// is.
func (kv *KV) StreamAck(ctx context.Context, key, group string, ids ...string) error {
	if err := kv.check(ctx); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	if err := kv.client.XAck(ctx, kv.key(key), group, ids...).Err(); err != nil {
		return fmt.Errorf("rediskv: stream ack %q: %w", key, err)
	}
	return nil
}

// StreamTrim removes, with one Lua script (trimScript, atomic), the
// acknowledged entries beyond lim (XTRIM MINID at the lower of the limits'
// cut and the group's oldest unacknowledged entry). The MaxLen cut removes
// at most trimBudget entries a call; a later call continues. Entry ages are
// the Redis server's clock. Zero limits, a missing stream or group remove
// nothing.
func (kv *KV) StreamTrim(ctx context.Context, key, group string, lim store.LogLimit) (int64, error) {
	if err := kv.check(ctx); err != nil {
		return 0, err
	}
	if lim.MaxAge <= 0 && lim.MaxLen <= 0 {
		return 0, nil
	}
	n, err := trimScript.Run(ctx, kv.client, []string{kv.key(key)}, group, ms(lim.MaxAge), max(lim.MaxLen, 0), trimBudget).Int64()
	if err != nil {
		return 0, fmt.Errorf("rediskv: stream trim %q: %w", key, err)
	}
	return n, nil
}

// StreamInfo describes the stream and group in two round trips: a
// MULTI/EXEC of XLEN, XINFO GROUPS, XPENDING and XINFO CONSUMERS (a
// consistent snapshot), then the first undelivered entry. Undelivered is
// Redis's lag of the group when Redis knows it, else counted, up to
// countBudget (a lower bound past it). Without the group every entry is
// undelivered; without the stream everything is zero.
func (kv *KV) StreamInfo(ctx context.Context, key, group string) (store.StreamInfo, error) {
	if err := kv.check(ctx); err != nil {
		return store.StreamInfo{}, err
	}
	info, err := kv.streamInfo(ctx, kv.key(key), group)
	if err != nil {
		return store.StreamInfo{}, fmt.Errorf("rediskv: stream info %q: %w", key, err)
	}
	return info, nil
}

func (kv *KV) streamInfo(ctx context.Context, k, group string) (store.StreamInfo, error) {
	st, err := kv.groupState(ctx, k, group, true)
	if err != nil {
		return store.StreamInfo{}, err
	}
	info := store.StreamInfo{Length: st.length}
	if !st.found {
		info.Undelivered = st.length
		info.OldestUnacked = idTime(st.first)
		return info, nil
	}
	info.Pending = st.pending.Count
	if info.Pending > 0 {
		info.OldestUnacked = idTime(st.pending.Lower)
	}
	for _, c := range st.consumers {
		info.Consumers = append(info.Consumers, store.StreamConsumer{Name: c.Name, Pending: c.Pending, Idle: c.Idle})
	}
	next, err := kv.client.XRangeN(ctx, k, "("+st.last, "+", 1).Result()
	if err != nil || len(next) == 0 {
		return info, err
	}
	if t := idTime(next[0].ID); info.OldestUnacked.IsZero() || t.Before(info.OldestUnacked) {
		info.OldestUnacked = t
	}
	// Redis 6 sends no lag (go-redis reads 0) and Redis 7 none (-1) when it
	// cannot know it; an entry exists after the last delivery, so a lag
	// below 1 is unknown.
	if st.lag > 0 && st.lag <= st.length {
		info.Undelivered = st.lag
		return info, nil
	}
	info.Undelivered, err = countScript.Run(ctx, kv.client, []string{k}, st.last, countBudget).Int64()
	return info, err
}

// groupState is what Redis reports of a stream and one of its groups.
type groupState struct {
	exists    bool // the stream exists
	found     bool // the group exists
	length    int64
	first     string // the ID of the stream's first entry ("" when empty)
	last      string // the group's last-delivered-id
	lag       int64  // entries after last, as Redis reports it (≤ 0: unknown)
	pending   *redis.XPending
	consumers []redis.XInfoConsumer
}

// groupState reads the stream k and its group in one MULTI/EXEC, with the
// group's consumers when withConsumers.
func (kv *KV) groupState(ctx context.Context, k, group string, withConsumers bool) (groupState, error) {
	var (
		typ     *redis.StatusCmd
		xlen    *redis.IntCmd
		first   *redis.XMessageSliceCmd
		groups  *redis.XInfoGroupsCmd
		pending *redis.XPendingCmd
		cons    *redis.XInfoConsumersCmd
	)
	// Commands fail for a missing stream or group; each is checked below.
	_, _ = kv.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		typ = p.Type(ctx, k)
		xlen = p.XLen(ctx, k)
		first = p.XRangeN(ctx, k, "-", "+", 1)
		groups = p.XInfoGroups(ctx, k)
		pending = p.XPending(ctx, k, group)
		if withConsumers {
			cons = p.XInfoConsumers(ctx, k, group)
		}
		return nil
	})
	var st groupState
	if err := typ.Err(); err != nil || typ.Val() == "none" {
		return st, err
	}
	if err := errors.Join(xlen.Err(), first.Err(), groups.Err()); err != nil {
		return st, err
	}
	st.exists, st.length = true, xlen.Val()
	if f := first.Val(); len(f) > 0 {
		st.first = f[0].ID
	}
	for _, g := range groups.Val() {
		if g.Name == group {
			st.found, st.last, st.lag = true, g.LastDeliveredID, g.Lag
		}
	}
	if !st.found {
		return st, nil
	}
	if err := pending.Err(); err != nil {
		return st, err
	}
	st.pending = pending.Val()
	if withConsumers {
		if err := cons.Err(); err != nil {
			return st, err
		}
		st.consumers = cons.Val()
	}
	return st, nil
}

// StreamUnacked returns up to limit (> 0) of the newest entries group has
// not acknowledged, newest first: XREVRANGE from the end down to the
// group's oldest pending entry or, with none pending, to the entry after
// its last delivery (the whole stream without the group), so acknowledged
// entries newer than the oldest unacknowledged one come too.
func (kv *KV) StreamUnacked(ctx context.Context, key, group string, limit int) ([]store.StreamEntry, error) {
	if err := kv.check(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("rediskv: stream unacked %q: limit %d, want > 0", key, limit)
	}
	k := kv.key(key)
	st, err := kv.groupState(ctx, k, group, false)
	if err != nil || !st.exists {
		return nil, wrapErr("stream unacked", key, err)
	}
	start := "-"
	if st.found {
		start = "(" + st.last
		if st.pending.Count > 0 {
			start = st.pending.Lower
		}
	}
	msgs, err := kv.client.XRevRangeN(ctx, k, "+", start, int64(limit)).Result()
	if err != nil {
		return nil, wrapErr("stream unacked", key, err)
	}
	out := make([]store.StreamEntry, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, streamEntry(m))
	}
	return out, nil
}

// wrapErr names the operation and key of a non-nil err.
func wrapErr(op, key string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("rediskv: %s %q: %w", op, key, err)
}

var _ store.Streams = (*KV)(nil)
