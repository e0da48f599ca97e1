package pipeline

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/svc-gateway/svc/internal/llm/sse"
)

func TestChainOrder(t *testing.T) {
	var order []string
	mw := func(name string) Middleware {
		return func(next Handler) Handler {
			return func(ctx context.Context, x *Exchange) (*Response, error) {
				order = append(order, name+">")
				r, err := next(ctx, x)
				order = append(order, "<"+name)
				return r, err
			}
		}
	}
	h := Chain(func(context.Context, *Exchange) (*Response, error) {
		order = append(order, "h")
		return &Response{Status: 200}, nil
	}, mw("a"), mw("b"))
	if _, err := h(context.Background(), &Exchange{}); err != nil {
		t.Fatal(err)
	}
	got, want := order, []string{"a>", "b>", "h", "<b", "<a"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

type sliceStream struct {
	evs    []sse.Event
	err    error
	closed int
}

func (s *sliceStream) Next() (sse.Event, error) {
	if len(s.evs) == 0 {
		if s.err != nil {
			return sse.Event{}, s.err
		}
		return sse.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

func (s *sliceStream) Close() error { s.closed++; return nil }

func TestObserve(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name    string
		src     *sliceStream
		drain   bool
		wantN   int
		wantEnd error
	}{
		{"clean end", &sliceStream{evs: []sse.Event{{Data: []byte("1")}, {Data: []byte("2")}}}, true, 2, nil},
		{"error", &sliceStream{evs: []sse.Event{{Data: []byte("1")}}, err: boom}, true, 1, boom},
		{"abandoned", &sliceStream{evs: []sse.Event{{Data: []byte("1")}}}, false, 0, ErrAbandoned},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, ends := 0, 0
			var endErr error
			s := Observe(c.src, func(sse.Event) { n++ }, func(err error) { ends++; endErr = err })
			if c.drain {
				for {
					if _, err := s.Next(); err != nil {
						break
					}
				}
			}
			s.Close()
			s.Close()
			if n != c.wantN || ends != 1 || !errors.Is(endErr, c.wantEnd) {
				t.Errorf("got %d events, %d ends, err %v; want %d, 1, %v", n, ends, endErr, c.wantN, c.wantEnd)
			}
		})
	}
}
