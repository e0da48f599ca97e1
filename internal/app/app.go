// Package app owns the lifecycle of svc's components: the Component interface,
// running several under one group with graceful shutdown, the HTTP server
// wrapper every component uses, and the /health and /ready handlers.
//
// cmd/svc and wire import app; components (proxy, mgmt) use Server and Probe.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"
)

// Component is one long-running part of the process. Run blocks until ctx is
// cancelled (then shuts down gracefully and returns nil) or it fails.
type Component interface {
	Name() string
	Run(ctx context.Context) error
}

// RunAll runs every component until ctx ends or one fails; a failure cancels
// the others. It returns the first error.
func RunAll(ctx context.Context, comps ...Component) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, c := range comps {
		g.Go(func() error {
			if err := c.Run(ctx); err != nil {
				return fmt.Errorf("%s: %w", c.Name(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// Func adapts a function to a Component.
type Func struct {
	N string
	F func(ctx context.Context) error
}

// Name implements Component.
func (f Func) Name() string { return f.N }

// Run implements Component.
func (f Func) Run(ctx context.Context) error { return f.F(ctx) }

// Server is an HTTP listener with svc's timeouts and graceful drain.
type Server struct {
	name  string
	srv   *http.Server
	ln    net.Listener
	drain time.Duration
	log   *slog.Logger
	// abort, when set, is called when the drain time has passed with
	// requests still running, before their connections are closed, so they
	// can end themselves properly (a stream with an error event).
	abort func()
}

// abortGrace is how long requests told to abort get to end themselves
// before their connections are closed.
const abortGrace = 2 * time.Second

// OnDrainTimeout sets f to run when the drain time has passed with requests
// still running, before their connections are closed.
func (s *Server) OnDrainTimeout(f func()) { s.abort = f }

// Listen binds addr now (so a bad port fails the start) and returns a Server
// that will serve h when Run is called.
func Listen(name, addr string, h http.Handler, drain time.Duration, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen %s: %w", name, addr, err)
	}
	return &Server{
		name:  name,
		ln:    ln,
		drain: drain,
		log:   log,
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 30 * time.Second,
			// No WriteTimeout: streams may last minutes. IdleTimeout bounds keep-alive.
			IdleTimeout:    120 * time.Second,
			MaxHeaderBytes: 1 << 20,
			ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
	}, nil
}

// Addr is the bound address (useful with port 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Name implements Component.
func (s *Server) Name() string { return s.name }

// Run serves until ctx ends, then stops accepting, waits up to the drain time
// for in-flight requests and streams, and closes what remains.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	s.log.Info("listening", "component", s.name, "addr", s.ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.drain)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) && s.abort != nil {
		s.log.Warn("drain time exceeded; ending the requests still running", "component", s.name)
		s.abort()
		gctx, cancel := context.WithTimeout(context.Background(), abortGrace)
		err = s.srv.Shutdown(gctx)
		cancel()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("drain time exceeded; closing remaining connections", "component", s.name)
		err = s.srv.Close()
	}
	if e := <-errc; e != nil && !errors.Is(e, http.ErrServerClosed) {
		return e
	}
	return err
}

// Probe checks one dependency for readiness.
type Probe func(ctx context.Context) error

// Health registers GET /health and GET /ready on mux. /ready answers 200 only
// while every probe answers within a second.
func Health(mux *http.ServeMux, probes map[string]Probe) {
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		status, code := "ready", http.StatusOK
		checks := map[string]string{}
		for name, p := range probes {
			if err := p(ctx); err != nil {
				checks[name] = "unavailable"
				status, code = "not_ready", http.StatusServiceUnavailable
				continue
			}
			checks[name] = "ok"
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = writeJSON(w, map[string]any{"status": status, "checks": checks})
	})
}

// Close releases the listener of a server that will not Run (or has run).
func (s *Server) Close() error { return s.ln.Close() }

// Service is a listening component: its HTTP server and the background work
// that belongs to it (a model-list refresh, an index that follows the shared
// store). The background work starts with the server and stops after the
// server has drained, so requests still in flight can use it.
type Service struct {
	Server     *Server
	Background []Component
}

// Name implements Component.
func (s *Service) Name() string { return s.Server.Name() }

// Addr is the server's bound address.
func (s *Service) Addr() net.Addr { return s.Server.Addr() }

// Run serves until ctx ends or the server or a background task fails.
func (s *Service) Run(ctx context.Context) error {
	bgCtx, stop := context.WithCancel(context.Background())
	defer stop()
	bgDone := make(chan error, 1)
	go func() { bgDone <- RunAll(bgCtx, s.Background...) }()
	srvCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	srvDone := make(chan error, 1)
	go func() { srvDone <- s.Server.Run(srvCtx) }()
	select {
	case err := <-srvDone:
		stop()
		if e := <-bgDone; err == nil {
			err = e
		}
		return err
	case err := <-bgDone:
		if err == nil {
			// The background work ended on its own: serve on.
			return <-srvDone
		}
		cancel() // a background task failed: stop serving too
		<-srvDone
		return err
	}
}
