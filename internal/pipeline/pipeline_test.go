package pipeline

import (
	"context"
	"errors"
	"io"
	"strings"
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

func TestBuildTracesStages(t *testing.T) {
	var trace []string
	pass := func(next Handler) Handler { return next }
	h := Build(func(context.Context, *Exchange) (*Response, error) { return &Response{Status: 200}, nil },
		func(s string) { trace = append(trace, s) },
		Stage{"a", pass}, Stage{"b", pass}, Stage{"c", pass})
	if _, err := h(context.Background(), &Exchange{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(trace, ","); got != "a,b,c" {
		t.Errorf("trace %q, want a,b,c", got)
	}
	// A stage that answers stops the trace there.
	trace = nil
	stop := func(Handler) Handler {
		return func(context.Context, *Exchange) (*Response, error) { return &Response{Status: 204}, nil }
	}
	h = Build(nil, func(s string) { trace = append(trace, s) }, Stage{"a", pass}, Stage{"stop", stop}, Stage{"c", pass})
	if r, _ := h(context.Background(), &Exchange{}); r.Status != 204 || strings.Join(trace, ",") != "a,stop" {
		t.Errorf("got %d, trace %v; want 204 after a,stop", r.Status, trace)
	}
}

func TestRewrite(t *testing.T) {
	ev := func(s string) sse.Event { return sse.Event{Data: []byte(s)} }
	stop := errors.New("blocked by the guard")
	src := &sliceStream{evs: []sse.Event{ev("keep"), ev("drop"), ev("change"), ev("stop"), ev("never")}}
	s := Rewrite(src, func(e sse.Event) (sse.Event, error) {
		switch string(e.Data) {
		case "drop":
			return sse.Event{}, ErrDrop
		case "change":
			return ev("changed"), nil
		case "stop":
			return sse.Event{}, stop
		}
		return e, nil
	})
	var got []string
	var err error
	for {
		var e sse.Event
		if e, err = s.Next(); err != nil {
			break
		}
		got = append(got, string(e.Data))
	}
	if strings.Join(got, ",") != "keep,changed" || !errors.Is(err, stop) {
		t.Errorf("got %v then %v, want keep,changed then the stage's error", got, err)
	}
	if src.closed != 1 {
		t.Errorf("upstream closed %d times, want once when the stage ended the stream", src.closed)
	}
	if _, err := s.Next(); !errors.Is(err, stop) {
		t.Errorf("Next after the end = %v, want the same error", err)
	}
	// A clean stream passes through to its end.
	s = Rewrite(&sliceStream{evs: []sse.Event{ev("1")}}, func(e sse.Event) (sse.Event, error) { return e, nil })
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("end = %v, want io.EOF", err)
	}
}
