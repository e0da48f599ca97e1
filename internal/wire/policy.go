package wire

import (
	"context"

	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/policy"
	"github.com/svc-gateway/svc/internal/policy/docs"
	"github.com/svc-gateway/svc/internal/policy/httpapi"
)

// newPolicy is the policy library component (policy-perfect): policies,
// presets, assignments and statistics behind the admin key (or a
// signed-in admin), each policy
// answered with the checks its content compiles to, and document-to-policy
// generation (its jobs run in the background on any replica).
func newPolicy(s *System) (*app.Service, error) {
	var err error
	admin := part(&err, s.AdminKey)
	db := part(&err, s.SQL)
	probes := part(&err, s.Probes)
	beats := part(&err, s.Heartbeat)
	si := part(&err, s.SignIn)
	if err != nil {
		return nil, err
	}
	// The admin key, or a signed-in user with the admin role.
	authn := append(auth.Chain{auth.AdminKey(admin)}, si.authenticators()...)
	api := httpapi.New(httpapi.Deps{Auth: authn, Store: policy.NewSQLStore(db, nil),
		Compile: policy.Compile, Probes: probes, Log: s.Log})
	// Document-to-policy generation: uploads become jobs any replica runs.
	opts := docs.Options{Logger: s.Log, Retention: s.Config.PolicyJobRetention}
	if g := s.Config.PolicyGeneration; g.Model != "" {
		url := g.URL
		if url == "" {
			url = "http://" + s.Config.Addr(config.Proxy) + "/v1"
		}
		opts.Refiner = &docs.ModelRefiner{BaseURL: url, Key: g.Key, Model: g.Model}
	}
	jobs := docs.NewJobs(db, opts)
	docsAPI := docs.Handler(jobs, 0)
	for _, pattern := range []string{"POST /api/policies/generate-from-document", "GET /api/documents/job/"} {
		if err := api.Mount(pattern, docsAPI); err != nil {
			return nil, err
		}
	}
	srv, err := s.serve(config.Policy, api)
	if err != nil {
		return nil, err
	}
	return &app.Service{Server: srv, Background: []app.Component{
		beats.Component(config.Policy, nil),
		app.Func{N: "policy-jobs", F: func(ctx context.Context) error {
			if err := jobs.Run(ctx); ctx.Err() == nil {
				return err
			}
			return nil
		}},
	}}, nil
}
