// Package vindex is the semantic cache's in-process approximate
// nearest-neighbour index: unit-length float32 vectors (cosine similarity is
// their dot product), grouped in scopes, searched only within one scope,
// bounded by a maximum number of entries.
//
// A scope smaller than Options.ExactBelow is searched exactly (brute force);
// once it reaches that size it is promoted to an HNSW graph (Malkov and
// Yashunin, 2016), implemented here with real deletion and neighbour repair.
// github.com/coder/hnsw v0.6.1 was evaluated and not used: its layer search
// stops at the first expansion that does not improve the best candidate
// (recall@1 of 0.1–0.25 on 20,000 random 256-dimensional vectors, whatever
// EfSearch), and Delete can empty an upper layer, after which Add puts a node
// on that layer but not the ones below and the next Add dereferences nil
// (reproduced with 500 adds, 495 deletes, then more adds). Similarities are
// computed with github.com/viterin/vek (AVX2 and FMA where available).
//
// Capacity eviction is CLOCK (second chance), an approximation of LRU that
// costs a search one atomic store: entries queue in the order they were
// added; an entry returned by Search is marked, and when the index is full
// the oldest unmarked entry is evicted, marked ones being unmarked and sent
// to the back of the queue.
//
// vindex imports nothing of svc; the semantic cache (internal/cache) is its
// only intended importer.
package vindex
