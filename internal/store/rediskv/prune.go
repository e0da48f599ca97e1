package rediskv

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// pruneScript deletes the consumers of group ARGV[1] on stream KEYS[1]
// that have nothing pending and have been idle for at least ARGV[2]
// milliseconds, except the consumer ARGV[3], and returns how many. One
// script, so a consumer cannot read an entry between the check and its
// deletion (XGROUP DELCONSUMER would orphan its pending entries).
var pruneScript = redis.NewScript(`
local ok, consumers = pcall(redis.call, 'XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if not ok then
	return 0
end
local idle = tonumber(ARGV[2])
local n = 0
for _, c in ipairs(consumers) do
	local f = {}
	for i = 1, #c, 2 do
		f[c[i]] = c[i + 1]
	end
	if f['name'] ~= ARGV[3] and tonumber(f['pending']) == 0 and tonumber(f['idle']) >= idle then
		redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f['name'])
		n = n + 1
	end
end
return n
`)

// StreamPrune deletes the consumers of group on the stream at key that
// have nothing pending and have not read for idle or longer, except
// keep (the caller's own name): bridges whose names changed (a new pod
// name at each restart) would otherwise be listed for ever. It returns
// how many it deleted; a missing stream or group deletes none.
func (kv *KV) StreamPrune(ctx context.Context, key, group, keep string, idle time.Duration) (int64, error) {
	if err := kv.check(ctx); err != nil {
		return 0, err
	}
	n, err := pruneScript.Run(ctx, kv.client, []string{kv.key(key)}, group, idle.Milliseconds(), keep).Int64()
	if err != nil {
		return 0, fmt.Errorf("rediskv: prune consumers of %q: %w", key, err)
	}
	return n, nil
}
