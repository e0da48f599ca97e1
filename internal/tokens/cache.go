package tokens

import (
	"hash/maphash"
	"sync"
)

// A chat request resends the whole conversation, so most of a prompt's text
// was counted on an earlier turn. counts remembers the counts of texts of at
// least cacheMinBytes, by encoding and a 64-bit hash of the text (a collision
// between two texts is a 2⁻⁶⁴ chance per pair); each shard forgets everything
// when it holds cacheShardEntries, which bounds it to about 2 MB.
const (
	cacheMinBytes     = 256
	cacheShards       = 32
	cacheShardEntries = 2048
)

type countCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu sync.Mutex
	m  map[cacheKey]int64
}

type cacheKey struct {
	enc  Encoding
	hash uint64
}

var counts = &countCache{seed: maphash.MakeSeed()}

// cacheOff turns the cache off, for benchmarks of the first sight of a text.
var cacheOff bool

// count returns the count of text in enc, computing it with f on a miss.
func (c *countCache) count(enc Encoding, text string, f func(string) int64) int64 {
	if len(text) < cacheMinBytes || cacheOff {
		return f(text)
	}
	h := maphash.String(c.seed, text)
	k := cacheKey{enc, h}
	s := &c.shards[h%cacheShards]
	s.mu.Lock()
	n, ok := s.m[k]
	s.mu.Unlock()
	if ok {
		return n
	}
	n = f(text)
	s.mu.Lock()
	if s.m == nil || len(s.m) >= cacheShardEntries {
		s.m = make(map[cacheKey]int64, cacheShardEntries)
	}
	s.m[k] = n
	s.mu.Unlock()
	return n
}
