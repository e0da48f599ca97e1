package proxy

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/provider"
)

// send applies prov's credentials (key) to req, sends it, and turns a
// transport failure or an error answer into the caller's error. It records
// the provider's status and the time waited on x; start is when the call
// began, for callers that read the body later. The call stage scrubs key
// from every error it returns.
func (p *Proxy) send(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider, req *http.Request, key string) (*http.Response, time.Time, error) {
	if err := signerFor(prov).Sign(req, key); err != nil {
		return nil, time.Time{}, signError(prov.Name, err)
	}
	if p.d.Health != nil {
		x.UpstreamDone = p.d.Health.Start(prov.Name, x.UpstreamModel)
	}
	p.inject(ctx, req)
	start := time.Now()
	resp, err := p.d.Client.Do(req)
	if err != nil {
		x.Upstream = time.Since(start)
		return nil, start, err
	}
	x.UpstreamStatus = resp.StatusCode
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		x.Upstream = time.Since(start)
		return nil, start, prov.Adapter.DecodeError(prov.Name, resp.StatusCode, resp.Header, b)
	}
	return resp, start, nil
}

// receive reads a successful answer's body, recording the time waited.
func (p *Proxy) receive(x *pipeline.Exchange, resp *http.Response, start time.Time) ([]byte, error) {
	body, err := p.d.Client.ReadBody(resp)
	x.Upstream = time.Since(start)
	x.FirstByte = time.Now()
	return body, err
}
