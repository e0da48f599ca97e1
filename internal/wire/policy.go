package wire

import (
	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/policy"
	"github.com/svc-gateway/svc/internal/policy/httpapi"
)

// newPolicy is the policy library component (policy-perfect): policies,
// presets, assignments and statistics behind the admin key, each policy
// answered with the checks its content compiles to.
func newPolicy(s *System) (*app.Service, error) {
	var err error
	admin := part(&err, s.AdminKey)
	db := part(&err, s.SQL)
	probes := part(&err, s.Probes)
	beats := part(&err, s.Heartbeat)
	if err != nil {
		return nil, err
	}
	api := httpapi.New(httpapi.Deps{Auth: auth.AdminKey(admin), Store: policy.NewSQLStore(db, nil),
		Compile: policy.Compile, Probes: probes, Log: s.Log})
	srv, err := s.serve(config.Policy, api)
	if err != nil {
		return nil, err
	}
	return &app.Service{Server: srv, Background: []app.Component{beats.Component(config.Policy, nil)}}, nil
}
