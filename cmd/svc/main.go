// Command svc is the svc gateway: `svc serve` runs the components chosen by
// SERVICE_TYPE (all by default) until SIGINT or SIGTERM, then drains in-flight
// requests and streams, flushes the audit log and exits 0. `svc version`
// prints the version.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/wire"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `usage: svc <command>

commands:
  serve     run the gateway (components from SERVICE_TYPE; settings from env and SVC_CONFIG)
  version   print the version
`

func main() {
	cmd := "serve"
	if len(os.Args) > 1 {
		cmd = os.Args[1]
	}
	switch cmd {
	case "serve":
		os.Exit(serve())
	case "version", "--version", "-v":
		fmt.Println("svc", version)
	case "help", "--help", "-h":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "svc: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
}

func serve() int {
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level(cfg.LogLevel)}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := wire.Build(ctx, cfg, wire.Options{Log: log, Announce: os.Stderr})
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc: %v\n", err)
		return 1
	}
	log.Info("svc started", "version", version, "components", cfg.Components, "data_dir", cfg.DataDir)
	if err := p.Run(ctx); err != nil {
		log.Error("svc stopped with an error", "err", err)
		return 1
	}
	return 0
}

func level(s string) slog.Level {
	switch s {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
