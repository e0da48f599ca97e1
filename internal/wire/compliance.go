package wire

import (
	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/compliance/httpapi"
	"github.com/svc-gateway/svc/internal/compliance/model"
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/policy"
)

// Compliance is the process's compliance engine, scan records and
// learner, built once: the compliance component serves them, and the
// proxy's policy stage (issue 14) calls the engine in process.
type Compliance struct {
	Engine  *compliance.Engine
	Records *compliance.Records
	Learner *compliance.Learner
}

// Compliance builds the engine over the detector families, the scan
// records (flushed and purged in the background) and the shared risk
// model (following other replicas' feedback in the background).
func (s *System) Compliance() (*Compliance, error) {
	return s.compliance.get(func() (*Compliance, error) {
		db, err := s.SQL()
		if err != nil {
			return nil, err
		}
		eng, err := s.Engine()
		if err != nil {
			return nil, err
		}
		m, err := model.New(s.ctx, db, model.Options{Logger: s.Log})
		if err != nil {
			return nil, err
		}
		recs := compliance.NewRecords(db, compliance.RecordsOptions{Retention: s.Config.ComplianceScanRetention, Log: s.Log})
		s.runs("compliance-records", recs.Run)
		s.runs("compliance-model", m.Run)
		return &Compliance{Engine: eng, Records: recs, Learner: compliance.NewLearner(eng, m, recs)}, nil
	})
}

// Engine is the compliance engine over the built-in detectors, built once
// per process (the secret rules compile in ~0.1 s).
func (s *System) Engine() (*compliance.Engine, error) {
	return s.engine.get(compliance.NewDefault)
}

// Enforcer is the proxy's policy check in process: the caller's preset
// from the policy library, evaluated over the compliance engine; its
// statistics are flushed every second.
func (s *System) Enforcer() (*enforcer, error) {
	return s.enforcer.get(func() (*enforcer, error) {
		var err error
		db := part(&err, s.SQL)
		eng := part(&err, s.Engine)
		keys := part(&err, s.Keys)
		dir := part(&err, s.Teams)
		if err != nil {
			return nil, err
		}
		e := &enforcer{store: policy.NewSQLStore(db, nil), ev: policy.NewEvaluator(eng, nil), eng: eng, keys: keys, teams: dir,
			def: s.Config.DefaultPreset, cache: map[callerKey]resolved{}}
		s.runs("policy-stats", e.flushStats)
		return e, nil
	})
}

func newCompliance(s *System) (*app.Service, error) {
	var err error
	admin := part(&err, s.AdminKey)
	keys := part(&err, s.Keys)
	c := part(&err, s.Compliance)
	probes := part(&err, s.Probes)
	beats := part(&err, s.Heartbeat)
	si := part(&err, s.SignIn)
	if err != nil {
		return nil, err
	}
	// The admin key, a virtual key, or a signed-in user (the admin routes
	// need the admin role).
	api := httpapi.New(httpapi.Deps{
		Auth: append(auth.Chain{auth.AdminKey(admin), keys}, si.authenticators()...), Engine: c.Engine, Records: c.Records, Learner: c.Learner,
		Features: compliance.Features,
		Metrics:  httpapi.NewMetrics(s.Metrics().Registry), Process: s.Metrics(), Probes: probes, Log: s.Log,
	})
	srv, err := s.serve(config.Compliance, api)
	if err != nil {
		return nil, err
	}
	return &app.Service{Server: srv, Background: []app.Component{beats.Component(config.Compliance, nil)}}, nil
}
