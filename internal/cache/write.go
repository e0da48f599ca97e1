package cache

import (
	"context"
)

// store writes e, already in the L1, to the index and the shared tier, and
// announces it on the entry log for the other replicas.
func (c *Cache) store(ctx context.Context, l *Lookup, e *Entry) {
	now := e.Created
	z, raw, err := encodeEntry(e)
	if err != nil {
		c.log.Error("cache: could not encode an entry", "err", err)
		return
	}
	c.stats.wrote(len(z), raw)
	vec := l.vec
	if vec == nil && l.key.Query != "" {
		if vec, err = c.embedQuery(ctx, l.key.Query); err != nil {
			c.embedFailed("entries are stored for exact matches only", err)
		}
	}
	if vec != nil {
		if err := c.index.Add(l.scope, e.Key, vec); err != nil {
			c.log.Error("cache: could not index an entry", "err", err)
		}
	}
	c.track(e.Key, liveInfo{scope: l.scope, expires: e.Expires, zsize: len(z), rawSize: raw})
	if l.gen == "" {
		return // the shared tier is unavailable: this replica's L1 and index only
	}
	sctx, cancel := context.WithTimeout(ctx, 10*c.o.StoreTimeout)
	defer cancel()
	if err := c.kv.Set(sctx, l2Key(l.gen, e.Key), z, l.ttl); err != nil {
		c.kvFailed("set", err)
		return
	}
	rec := logRecord{Key: e.Key, Scope: l.scope, NS: l.ns, Gen: l.gen, Exp: e.Expires.UnixMilli(), At: now.UnixMilli(), Z: len(z), Raw: raw}
	if c.local {
		rec.Query = l.key.Query
	} else {
		rec.Vec = vec
	}
	b, err := jsonMarshal(&rec)
	if err != nil {
		return
	}
	if err := c.kv.AppendLog(sctx, entryLog, logLimit(c.o.MaxEntries), b); err != nil {
		c.kvFailed("announce", err)
	}
}
