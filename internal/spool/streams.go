package spool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// The store.Streams block on one stream (Options.Key) and one group
// (Options.Group, or the first one used). Where the spool differs from the
// Redis stream:
//   - Acknowledged entries stay in the stream (Length, StreamUnacked may
//     return them) until StreamTrim removes them, or until their segment is
//     deleted because every frame in it is acknowledged, whichever is
//     first: acknowledged data never holds more than one segment's worth of
//     disk, trimmed or not.
//   - Acknowledgements out of order, pending entries and consumers live in
//     memory: after a restart every frame from the watermark on is
//     undelivered again, and the stream starts at the watermark.
//   - StreamAck ignores IDs that are not pending, and a group other than
//     the spool's (as XACK does).
var _ store.Streams = (*Spool)(nil)

// errGroup marks ErrStream for a group other than the spool's.
var errGroup = errors.New("group")

// check refuses a key or group the spool does not answer to; bind makes
// group the spool's group when it has none yet. mu held.
func (s *Spool) check(key, group string, bind bool) error {
	if s.closed {
		return ErrClosed
	}
	if s.opt.Key != "" && key != s.opt.Key {
		return fmt.Errorf("%w: key %q (this spool is %q)", ErrStream, key, s.opt.Key)
	}
	switch {
	case s.group == "" && bind:
		s.group = group
	case s.group != "" && group != s.group:
		return fmt.Errorf("%w: %w %q (this spool's is %q)", ErrStream, errGroup, group, s.group)
	}
	return nil
}

// StreamAppend appends values with Append.
func (s *Spool) StreamAppend(ctx context.Context, key string, values ...[]byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.opt.Key != "" && key != s.opt.Key {
		return fmt.Errorf("%w: key %q (this spool is %q)", ErrStream, key, s.opt.Key)
	}
	return s.Append(values...)
}

// StreamRead delivers up to count entries (count > 0) to consumer: its own
// pending ones, then others' pending ones idle for claimIdle or longer
// (claimed; claimIdle <= 0 claims none), then new ones, waiting up to block
// (woken by Append, Close or ctx) when there are none.
func (s *Spool) StreamRead(ctx context.Context, key, group, consumer string, count int, claimIdle, block time.Duration) ([]store.StreamEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if count <= 0 {
		return nil, fmt.Errorf("spool: read: count %d, want > 0", count)
	}
	var timer *time.Timer
	expired := false
	for {
		s.mu.Lock()
		if err := s.check(key, group, true); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		refs := s.deliver(consumer, count, claimIdle)
		if len(refs) > 0 || block <= 0 || expired {
			pins := s.pin(refs)
			s.mu.Unlock()
			return s.load(refs, pins)
		}
		ch := s.wake
		s.waiters++
		s.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(block)
			defer timer.Stop()
		}
		select {
		case <-ch:
		case <-timer.C:
			expired = true
			s.unwait(ch)
		case <-ctx.Done():
			s.unwait(ch)
			return nil, ctx.Err()
		}
	}
}

// unwait takes back a wait on ch that ended without Append waking it.
func (s *Spool) unwait(ch chan struct{}) {
	s.mu.Lock()
	if s.wake == ch && s.waiters > 0 {
		s.waiters--
	}
	s.mu.Unlock()
}

// deliver chooses up to count frames for consumer name and records them as
// pending to it. mu held.
func (s *Spool) deliver(name string, count int, claimIdle time.Duration) []frameRef {
	now := s.opt.Now()
	c := s.cons[name]
	if c == nil {
		c = &consumer{name: name}
		s.cons[name] = c
	}
	c.seen = now
	var refs []frameRef
	for _, pos := range c.pending[:min(count, len(c.pending))] {
		if i := s.find(pos); i >= 0 {
			refs = append(refs, s.frames[i])
			s.pend[pos] = pending{cons: c, at: now}
		}
	}
	if len(refs) < count && claimIdle > 0 {
		for _, pos := range s.claim(c, now, claimIdle, count-len(refs)) {
			if i := s.find(pos); i >= 0 {
				refs = append(refs, s.frames[i])
			}
		}
	}
	end := s.base + uint64(len(s.frames))
	for len(refs) < count && s.next < end {
		r := s.frames[s.next-s.base]
		s.next++
		s.pend[r.pos()] = pending{cons: c, at: now}
		c.pending = append(c.pending, r.pos())
		refs = append(refs, r)
	}
	return refs
}

// claim moves to c up to k of the oldest frames pending to other consumers
// for idle or longer, and returns them in stream order. mu held.
func (s *Spool) claim(c *consumer, now time.Time, idle time.Duration, k int) []uint64 {
	var got []uint64
	for _, o := range s.cons {
		if o == c {
			continue
		}
		for _, pos := range o.pending {
			if now.Sub(s.pend[pos].at) >= idle {
				got = append(got, pos)
			}
		}
	}
	if len(got) == 0 {
		return nil
	}
	slices.Sort(got)
	got = got[:min(k, len(got))]
	for _, pos := range got {
		s.pend[pos] = pending{cons: c, at: now}
	}
	for _, o := range s.cons {
		if o != c {
			o.pending = slices.DeleteFunc(o.pending, func(pos uint64) bool { return s.pend[pos].cons != o })
		}
	}
	c.pending = append(c.pending, got...)
	slices.Sort(c.pending)
	return got
}

// StreamAck acknowledges the pending entries with the given IDs.
func (s *Spool) StreamAck(ctx context.Context, key, group string, ids ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	err := s.check(key, group, true)
	s.mu.Unlock()
	if errors.Is(err, errGroup) {
		return nil // no entry is pending in another group
	}
	if err != nil {
		return err
	}
	return s.ack(ids)
}

// StreamTrim removes acknowledged entries from the start of the stream
// while the stream is longer than lim.MaxLen or the entry older than
// lim.MaxAge (a zero limit does not trim), stopping at the oldest
// unacknowledged entry, and returns how many it removed. Their bytes go
// when their segment is deleted, once every frame in it is acknowledged.
func (s *Spool) StreamTrim(ctx context.Context, key, group string, lim store.LogLimit) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	if err := s.check(key, group, false); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	cutoff := int64(math.MinInt64)
	if lim.MaxAge > 0 {
		cutoff = s.opt.Now().Add(-lim.MaxAge).UnixMicro()
	}
	n := 0
	if s.group != "" && (lim.MaxLen > 0 || lim.MaxAge > 0) {
		for s.head+n < s.wm {
			long := lim.MaxLen > 0 && len(s.frames)-s.head-n > lim.MaxLen
			if !long && s.frames[s.head+n].micros >= cutoff {
				break
			}
			n++
		}
	}
	if n > 0 {
		s.drop(n)
	}
	wm := s.watermark()
	s.mu.Unlock()
	return int64(n), s.persist(wm)
}

// StreamInfo describes the spool.
func (s *Spool) StreamInfo(ctx context.Context, key, group string) (store.StreamInfo, error) {
	if err := ctx.Err(); err != nil {
		return store.StreamInfo{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(key, group, false); err != nil {
		return store.StreamInfo{}, err
	}
	now := s.opt.Now()
	info := store.StreamInfo{
		Length:      int64(len(s.frames) - s.head),
		Pending:     int64(len(s.pend)),
		Undelivered: int64(s.base + uint64(len(s.frames)) - s.next),
	}
	if s.wm < len(s.frames) {
		info.OldestUnacked = time.UnixMicro(s.frames[s.wm].micros)
	}
	for _, c := range s.cons {
		info.Consumers = append(info.Consumers, store.StreamConsumer{Name: c.name, Pending: int64(len(c.pending)), Idle: now.Sub(c.seen)})
	}
	slices.SortFunc(info.Consumers, func(a, b store.StreamConsumer) int { return strings.Compare(a.Name, b.Name) })
	return info, nil
}

// StreamUnacked returns up to limit of the newest unacknowledged entries,
// newest first. It skips at most 3 × limit acknowledged ones newer than the
// oldest unacknowledged entry, and returns those past that (which the
// contract allows), so it costs O(limit). limit <= 0 returns nothing.
func (s *Spool) StreamUnacked(ctx context.Context, key, group string, limit int) ([]store.StreamEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if err := s.check(key, group, false); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	var refs []frameRef
	skip := 3 * limit
	for i := len(s.frames) - 1; i >= s.wm && len(refs) < limit; i-- {
		if s.frames[i].acked && skip > 0 {
			skip--
			continue
		}
		refs = append(refs, s.frames[i])
	}
	slices.Reverse(refs) // read in file order
	pins := s.pin(refs)
	s.mu.Unlock()
	out, err := s.load(refs, pins)
	slices.Reverse(out)
	return out, err
}

// maxSpan bounds the bytes load reads in one call of ReadAt (a frame larger
// than it is read alone); maxGap bounds the unwanted bytes it may read
// between two wanted frames.
const (
	maxSpan = 1 << 20
	maxGap  = 16 << 10
)

// load reads the frames of refs (pinned by pins, which it unpins) and
// returns them as entries, in order. A frame whose checksum no longer
// matches is logged, left out and acknowledged, so it is not delivered
// again.
func (s *Spool) load(refs []frameRef, pins []*segment) ([]store.StreamEntry, error) {
	defer s.unpin(pins)
	if len(refs) == 0 {
		return nil, nil
	}
	out := make([]store.StreamEntry, 0, len(refs))
	var bad []string
	var f *os.File
	var fseq uint32
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for i := 0; i < len(refs); {
		first := refs[i]
		end, j := first.end(), i+1
		for ; j < len(refs); j++ {
			r := refs[j]
			if r.seg != first.seg || r.off < end || r.off-end > maxGap || r.end()-first.off > maxSpan {
				break
			}
			end = r.end()
		}
		if f == nil || fseq != first.seg {
			if f != nil {
				f.Close()
			}
			var err error
			if f, err = os.Open(s.segPath(first.seg)); err != nil {
				return nil, fmt.Errorf("spool: read: %w", err)
			}
			fseq = first.seg
		}
		buf := make([]byte, end-first.off)
		if _, err := f.ReadAt(buf, int64(first.off)); err != nil {
			return nil, fmt.Errorf("spool: read: %w", err)
		}
		for _, r := range refs[i:j] {
			id := formatID(r.pos())
			payload, micros, ok := checkFrame(buf[r.off-first.off : r.end()-first.off])
			if !ok {
				s.log.Error("spool: frame corrupted since it was written; dropping it", "segment", r.seg, "offset", r.off)
				bad = append(bad, id)
				continue
			}
			out = append(out, store.StreamEntry{ID: id, Value: payload, Time: time.UnixMicro(micros)})
		}
		i = j
	}
	if len(bad) > 0 {
		if err := s.ack(bad); err != nil {
			s.log.Error("spool: acknowledging corrupted frames", "err", err)
		}
	}
	return out, nil
}
