package wire

import (
	"context"
	"errors"
	"runtime/debug"

	"github.com/svc-gateway/svc/internal/heartbeat"
	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/provider"
)

// Heartbeat is this process's heartbeat publisher over the KV store, beating
// every SVC_HEARTBEAT_INTERVAL: one instance name for the process. Each
// component adds its own beat (Publisher.Component) to its service's
// background work, so a component beats while it serves and says it
// stopped when it has drained.
func (s *System) Heartbeat() (*heartbeat.Publisher, error) {
	return s.beats.get(func() (*heartbeat.Publisher, error) {
		kv, err := s.KV()
		if err != nil {
			return nil, err
		}
		return heartbeat.New(kv, heartbeat.Options{Interval: s.Config.HeartbeatInterval, Version: buildVersion(), Log: s.Log}), nil
	})
}

// buildVersion is the module version of the binary, with the VCS revision
// of a development build ("" when the binary has no build information).
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	v := bi.Main.Version
	for _, st := range bi.Settings {
		if st.Key == "vcs.revision" && len(st.Value) >= 12 && v == "(devel)" {
			v += " " + st.Value[:12]
		}
	}
	return v
}

// providerStates lists the registry's providers for the comprehensive
// health, true for those that can serve requests as the proxy judges it: a
// key stored or in the environment, or none needed and the provider enabled
// or the default.
func providerStates(reg *provider.Registry, vault *keyvault.Vault) func(ctx context.Context) map[string]bool {
	return func(ctx context.Context) map[string]bool {
		out := make(map[string]bool, len(reg.Names()))
		for _, name := range reg.Names() {
			p, _ := reg.Lookup(name)
			_, err := vault.Key(ctx, name)
			out[name] = err == nil ||
				errors.Is(err, keyvault.ErrNoKey) && p.KeyOptional && (p.Enabled || name == reg.Default())
		}
		return out
	}
}
