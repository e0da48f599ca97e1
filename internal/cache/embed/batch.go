package embed

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Batch wraps e so that Embed calls arriving within wait of each other are
// sent to e as one call of at most maxBatch texts, for embedders that go over
// the network. A call with maxBatch texts or more is sent on its own, in
// chunks of maxBatch. A caller whose context ends gets its context's error at
// once; the shared call goes on for the others, and is cancelled only when
// every caller in it has gone. The shared call's context carries the values
// of the context of the batch's first caller. An error from e fails every
// caller of that call. Batch has e's name and dimension.
func Batch(e Embedder, maxBatch int, wait time.Duration) Embedder {
	return &batcher{e: e, max: max(maxBatch, 1), wait: max(wait, 0)}
}

type batcher struct {
	e    Embedder
	max  int
	wait time.Duration

	mu      sync.Mutex
	pending *batch // the batch still accepting callers, or nil
}

// batch is one call to e shared by several callers.
type batch struct {
	texts   []string
	callers int // callers still waiting, guarded by batcher.mu; at zero, cancel the call
	ctx     context.Context
	cancel  context.CancelFunc
	timer   *time.Timer
	done    chan struct{} // closed once vecs or err is set
	vecs    [][]float32
	err     error
}

func (b *batcher) Name() string { return b.e.Name() }
func (b *batcher) Dim() int     { return b.e.Dim() }

func (b *batcher) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(texts) >= b.max {
		return b.direct(ctx, texts)
	}
	bt, off := b.join(ctx, texts)
	stop := context.AfterFunc(ctx, func() { b.leave(bt) })
	select {
	case <-bt.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if stop() {
		b.leave(bt)
	}
	if bt.err != nil {
		return nil, bt.err
	}
	out := make([][]float32, len(texts))
	for i := range texts {
		out[i] = clone(bt.vecs[off+i])
	}
	return out, nil
}

// join adds texts to the pending batch, starting one if there is none or
// texts do not fit, and returns the batch and the offset of texts in it.
func (b *batcher) join(ctx context.Context, texts []string) (*batch, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p := b.pending; p != nil && len(p.texts)+len(texts) > b.max {
		b.pending = nil
		p.timer.Stop()
		go b.send(p)
	}
	p := b.pending
	if p == nil {
		ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		p = &batch{ctx: ctx, cancel: cancel, done: make(chan struct{})}
		p.timer = time.AfterFunc(b.wait, func() { b.flush(p) })
		b.pending = p
	}
	off := len(p.texts)
	p.texts = append(p.texts, texts...)
	p.callers++
	if len(p.texts) == b.max {
		b.pending = nil
		p.timer.Stop()
		go b.send(p)
	}
	return p, off
}

// leave records that one of p's callers no longer waits for it. When none
// does, p's call is cancelled, or never made if p is still pending.
func (b *batcher) leave(p *batch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p.callers--
	if p.callers > 0 {
		return
	}
	if b.pending == p {
		b.pending = nil
		p.timer.Stop()
	}
	p.cancel()
}

// flush sends p if it is still the pending batch, when its wait is over.
func (b *batcher) flush(p *batch) {
	b.mu.Lock()
	if b.pending != p {
		b.mu.Unlock()
		return // already sent when it filled up
	}
	b.pending = nil
	b.mu.Unlock()
	b.send(p)
}

// send makes p's call to e and wakes its callers.
func (b *batcher) send(p *batch) {
	vecs, err := b.e.Embed(p.ctx, p.texts)
	if err == nil && len(vecs) != len(p.texts) {
		err = fmt.Errorf("embed %s: got %d vectors for %d texts", b.e.Name(), len(vecs), len(p.texts))
	}
	p.vecs, p.err = vecs, err
	close(p.done)
}

// direct embeds texts in calls of at most b.max texts, outside any batch.
func (b *batcher) direct(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += b.max {
		chunk := texts[start:min(start+b.max, len(texts))]
		vs, err := b.e.Embed(ctx, chunk)
		if err != nil {
			return nil, err
		}
		if len(vs) != len(chunk) {
			return nil, fmt.Errorf("embed %s: got %d vectors for %d texts", b.e.Name(), len(vs), len(chunk))
		}
		out = append(out, vs...)
	}
	return out, nil
}

var _ Embedder = (*batcher)(nil)
