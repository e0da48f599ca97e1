// Command svc is the svc gateway: `svc serve` runs the components chosen by
// SERVICE_TYPE (all by default) until SIGINT or SIGTERM, then drains in-flight
// requests and streams, flushes the audit log and exits 0. `svc version`
// prints the module version and the VCS revision it was built from.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/wire"
)

const usage = `usage: svc <command> [flags]

commands:
  serve     run the gateway (components from SERVICE_TYPE; settings from the
            environment and the SVC_CONFIG file)
  version   print the version and the revision it was built from
  help      print this text

Run 'svc serve -h' for the flags of serve.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command line: it returns the exit status (0 ok, 1 failed at
// run time, 2 bad usage or settings).
func run(args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(args, stdout, stderr)
	case "version", "--version", "-version":
		if len(args) > 0 {
			fmt.Fprintf(stderr, "svc version: unexpected argument %q\n", args[0])
			return 2
		}
		fmt.Fprintln(stdout, version())
		return 0
	case "help", "--help", "-help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "svc: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// serve parses serve's flags, builds the process and runs it until a signal.
func serve(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "YAML file of settings (the same as SVC_CONFIG; the environment wins)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: svc serve [flags]\n\nRuns the components SERVICE_TYPE names (all by default) until SIGINT or SIGTERM.\nSettings come from the environment and the SVC_CONFIG file; see the README.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "svc serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *configFile != "" {
		os.Setenv("SVC_CONFIG", *configFile)
	}
	cfg, err := config.Load(wire.Components())
	if err != nil {
		fmt.Fprintf(stderr, "svc: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level(cfg.LogLevel)}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := wire.Build(ctx, cfg, wire.Options{Log: log, Announce: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "svc: %v\n", err)
		return 1
	}
	log.Info("svc started", "version", version(), "components", cfg.Components, "data_dir", cfg.DataDir)
	if err := p.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "svc: %v\n", err)
		log.Error("svc stopped with an error", "err", err)
		return 1
	}
	return 0
}

// version is the module version and the VCS revision of the build, from the
// build information the Go toolchain embeds.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "svc (no build information)"
	}
	v := "svc " + bi.Main.Version
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " " + rev + dirty
		if at != "" {
			v += " " + at
		}
	}
	return v + " " + bi.GoVersion
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
