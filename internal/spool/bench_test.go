package spool

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

var entry1K = bytes.Repeat([]byte("e"), 1024)

// BenchmarkAppend appends one 1 KB entry per op from one goroutine; every
// 16384 ops the spool is drained (timer stopped) so MaxBytes is not hit.
func BenchmarkAppend(b *testing.B) {
	s := open(b, b.TempDir(), Options{})
	b.SetBytes(int64(len(entry1K)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := s.Append(entry1K); err != nil {
			b.Fatal(err)
		}
		if i%16384 == 16383 {
			b.StopTimer()
			drain(b, s, true)
			b.StartTimer()
		}
	}
}

// BenchmarkWriteBaseline is the write(2) of a 1 KB frame alone, without
// the spool: what Append costs beyond it is the spool's.
func BenchmarkWriteBaseline(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "baseline"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	frame := make([]byte, headerSize+len(entry1K))
	b.SetBytes(int64(len(entry1K)))
	b.ReportAllocs()
	off := int64(0)
	for i := 0; b.Loop(); i++ {
		if _, err := f.WriteAt(frame, off); err != nil {
			b.Fatal(err)
		}
		off += int64(len(frame))
		if i%16384 == 16383 { // as BenchmarkAppend's drain deletes segments
			b.StopTimer()
			if err := f.Truncate(0); err != nil {
				b.Fatal(err)
			}
			off = 0
			b.StartTimer()
		}
	}
}

// BenchmarkAppendParallel appends 1 KB entries from GOMAXPROCS goroutines
// while one consumer drains the spool, as the forwarder or bridge does.
// MaxBytes is raised, as the consumer may fall behind for the run.
func BenchmarkAppendParallel(b *testing.B) {
	s := open(b, b.TempDir(), Options{MaxBytes: 16 << 30})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { consume(ctx, s) })
	b.SetBytes(int64(len(entry1K)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Append(entry1K); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	cancel()
	wg.Wait()
}

// BenchmarkAppend64 is BenchmarkAppendParallel from 64 goroutines, as a
// proxy answering 64 requests at once records their entries.
func BenchmarkAppend64(b *testing.B) {
	s := open(b, b.TempDir(), Options{MaxBytes: 16 << 30})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { consume(ctx, s) })
	b.SetBytes(int64(len(entry1K)))
	b.ReportAllocs()
	b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Append(entry1K); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	cancel()
	wg.Wait()
}

// consume reads and acknowledges batches of 500 until ctx ends.
func consume(ctx context.Context, s *Spool) {
	for ctx.Err() == nil {
		es, err := s.StreamRead(ctx, testKey, testGroup, "bench", 500, -1, 100*time.Millisecond)
		if err != nil {
			return
		}
		if err := s.StreamAck(ctx, testKey, testGroup, ids(es)...); err != nil {
			return
		}
	}
}

// BenchmarkDrain is the consumer's side: read and acknowledge 1 KB entries
// in batches of 500 (ns/op per entry).
func BenchmarkDrain(b *testing.B) {
	s := open(b, b.TempDir(), Options{})
	b.SetBytes(int64(len(entry1K)))
	b.ReportAllocs()
	done := 0
	for done < b.N {
		b.StopTimer()
		n := min(b.N-done, 100000)
		for range n {
			if err := s.Append(entry1K); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		for got := 0; got < n; {
			es := read(b, s, "bench", 500)
			ack(b, s, ids(es)...)
			got += len(es)
		}
		done += n
	}
}
