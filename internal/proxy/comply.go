package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// Enforcer applies the caller's policies (the preset of its key, team or
// role) to the texts of a prompt. wire supplies it over the policy
// library and the compliance engine; nil: no checks, nothing added.
type Enforcer interface {
	// Applies reports whether p has a preset at all: without one nothing
	// is gathered, parsed or checked.
	Applies(ctx context.Context, p *identity.Principal) (bool, error)
	Enforce(ctx context.Context, c EnforceCall) (Verdict, error)
}

// ErrPolicyUnavailable is wrapped by an Enforcer's error when the caller's
// policies could not be read (POLICY_FAIL_OPEN decides); any other error
// is the compliance check's (COMPLIANCE_FAIL_OPEN decides).
var ErrPolicyUnavailable = errors.New("policy: the caller's policies could not be read")

// EnforceCall is one check: the texts of a prompt, one per message part.
type EnforceCall struct {
	Principal   *identity.Principal
	Phase       string // "prompt" or "answer"
	Texts       []string
	Provider    string
	Model       string
	SourceIP    netip.Addr
	Application string // the x-svc-application header
}

// Verdict is what the caller's policies decided.
type Verdict struct {
	// Applied is false when the caller has no preset: nothing was checked.
	Applied bool
	// Action is "", "flag", "redact" or "block".
	Action string
	// Policy names the blocking policy.
	Policy string
	// Redacted holds, for "redact", the texts with values replaced (one
	// per EnforceCall text); RedactedTypes the types replaced.
	Redacted       []string
	RedactedTypes  []string
	Score          float64
	Violations     []string
	Frameworks     []string
	Classification string
}

// ComplianceOptions are the spec's rule 7 settings.
type ComplianceOptions struct {
	// Timeout bounds one check (COMPLIANCE_TIMEOUT_SECS, default 8 s).
	Timeout time.Duration
	// FailOpen lets a request through when the compliance check fails
	// (COMPLIANCE_FAIL_OPEN); PolicyFailOpen when its policies cannot be
	// read (POLICY_FAIL_OPEN). Both default to closed: 503.
	FailOpen, PolicyFailOpen bool
}

// comply is the policy stage of chat routes: after the cache looked,
// before routing, it checks the prompt, and after the call the answer
// (checkAnswer). Block answers 403 policy_violation naming the
// policy; redact replaces the values in the request sent upstream (the
// inbound one is untouched) and says so in x-svc-redacted; flag passes.
// Each outcome is kept on the exchange for the audit entry, and an
// exchange with findings never writes the cache.
func (p *Proxy) comply(next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		if x.Chat == nil && (x.Endpoint != pipeline.NativeMessages || len(x.Body) == 0) {
			return next(ctx, x)
		}
		if ok, err := p.d.Enforcer.Applies(ctx, x.Principal); err != nil || !ok {
			if err != nil {
				return p.complyFailed(ctx, x, next, err)
			}
			return next(ctx, x) // no preset: nothing to check, before or after
		}
		var (
			texts []string
			at    []textAt
		)
		switch {
		case x.Chat != nil:
			texts, at = promptTexts(x.Chat)
		default:
			texts, at = nativePromptTexts(x.Body)
		}
		call := EnforceCall{Principal: x.Principal, Phase: "prompt", Texts: texts, Model: x.Model,
			SourceIP: sourceIP(x), Application: x.Inbound.Header.Get("x-svc-application")}
		if x.Plan != nil && len(x.Plan.Decisions) > 0 && x.Plan.Decisions[0].Provider != nil {
			call.Provider, call.Model = x.Plan.Decisions[0].Provider.Name, x.Plan.Decisions[0].Model
		}
		v, err := p.enforce(ctx, call)
		if err != nil {
			return p.complyFailed(ctx, x, next, err)
		}
		if !v.Applied {
			return next(ctx, x) // the preset went between Applies and Enforce
		}
		x.Compliance = &pipeline.Compliance{Status: "compliant", Score: v.Score, Classification: v.Classification,
			Violations: v.Violations, Frameworks: v.Frameworks}
		x.Header.Set("x-svc-compliance-score", strconv.FormatFloat(v.Score, 'f', 3, 64))
		if len(v.Violations) > 0 {
			x.DoNotStore = "compliance"
		}
		switch v.Action {
		case "block":
			x.Compliance.Status, x.Compliance.Policy, x.DoNotStore = "blocked", v.Policy, "blocked"
			return nil, &apierr.Error{Kind: apierr.Forbidden, Code: "policy_violation",
				Message: fmt.Sprintf("request blocked by compliance policy %q", v.Policy)}
		case "redact":
			if len(v.Redacted) != len(texts) {
				return p.complyFailed(ctx, x, next, fmt.Errorf("redaction gave %d texts for %d", len(v.Redacted), len(texts)))
			}
			if x.Chat == nil {
				body, err := redactNativePrompt(x.Body, at, v.Redacted)
				if err != nil {
					return p.complyFailed(ctx, x, next, err)
				}
				x.Body = body
			} else {
				body, chat, err := redactPrompt(x.Body, x.Chat, at, v.Redacted)
				if err != nil {
					return p.complyFailed(ctx, x, next, err)
				}
				x.Body, x.Chat = body, chat
			}
			x.Compliance.Status, x.Compliance.Redacted = "redacted", v.RedactedTypes
			x.Header.Set("x-svc-redacted", strings.Join(v.RedactedTypes, ","))
		case "flag":
			x.Compliance.Status = "flagged"
		}
		return p.checkAnswer(ctx, x, next)
	}
}

// checkAnswer runs the call and applies the caller's preset to its answer:
// a non-streamed one before it is sent (and before the cache could keep
// it), a streamed one as it passes (checkStream).
func (p *Proxy) checkAnswer(ctx context.Context, x *pipeline.Exchange, next pipeline.Handler) (*pipeline.Response, error) {
	resp, err := next(ctx, x)
	return p.answer(ctx, x, resp, err)
}

// complyHit checks an answer the cache served (the stage sits above the
// cache, so a hit never reaches comply) under the caller's preset; the
// prompt of a hit never leaves svc, so it is not checked.
func (p *Proxy) complyHit(next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		resp, err := next(ctx, x)
		if err != nil || x.Cache == nil || x.Chat == nil {
			return resp, err
		}
		if ok, aerr := p.d.Enforcer.Applies(ctx, x.Principal); aerr != nil || !ok {
			if aerr != nil && !p.failOpen(aerr) {
				x.DoNotStore = "unchecked"
				return nil, p.checkError(aerr)
			}
			return resp, nil
		}
		return p.answer(ctx, x, resp, nil)
	}
}

// answer applies the answer check to a call's outcome.
func (p *Proxy) answer(ctx context.Context, x *pipeline.Exchange, resp *pipeline.Response, err error) (*pipeline.Response, error) {
	if err == nil && resp != nil && resp.Stream != nil && resp.Status < 300 {
		resp.Stream = p.checkStream(ctx, x, resp.Stream)
		return resp, nil
	}
	if err != nil || resp == nil || resp.Stream != nil || resp.Raw != nil || resp.Status >= 300 || len(resp.Body) == 0 {
		return resp, err
	}
	native := x.Endpoint == pipeline.NativeMessages
	texts, idx := answerTexts(resp.Body)
	if native {
		texts, idx = nativeAnswerTexts(resp.Body)
	}
	if len(texts) == 0 {
		return resp, nil
	}
	v, err := p.enforce(ctx, EnforceCall{Principal: x.Principal, Phase: "answer", Texts: texts, Provider: x.Provider,
		Model: x.UpstreamModel, SourceIP: sourceIP(x), Application: x.Inbound.Header.Get("x-svc-application")})
	if err != nil {
		x.DoNotStore = "unchecked"
		if !p.failOpen(err) {
			return nil, p.checkError(err)
		}
		x.Compliance = &pipeline.Compliance{Status: "unchecked_fail_open"}
		return resp, nil
	}
	if !v.Applied {
		return resp, nil
	}
	c, blocked := answerVerdict(x, v)
	x.Header.Set("x-svc-compliance-score", strconv.FormatFloat(c.Score, 'f', 3, 64))
	switch v.Action {
	case "block":
		return nil, blocked
	case "redact":
		redact := redactAnswer
		if native {
			redact = redactNativeAnswer
		}
		body, err := redact(resp.Body, idx, v.Redacted)
		if err != nil || len(v.Redacted) != len(texts) {
			return nil, apierr.Wrap(apierr.Internal, "redaction_failed", "the answer could not be redacted", err)
		}
		resp.Body = body
		c.Status, c.Classification = "redacted", "restricted"
		c.Redacted = append(c.Redacted, v.RedactedTypes...)
		x.Header.Set("x-svc-redacted", strings.Join(c.Redacted, ","))
	}
	return resp, nil
}

// answerVerdict adds an answer's verdict to the exchange's compliance
// outcome (made on the first answer check when the prompt had none): the
// lower score, the violations marked "answer: ", the frameworks, the cache
// kept out on findings, "flagged" for a flag or a redaction (a non-streamed
// redaction sets "redacted" after). For a block it records it and returns
// the 403 to answer.
func answerVerdict(x *pipeline.Exchange, v Verdict) (*pipeline.Compliance, error) {
	c := x.Compliance
	if c == nil {
		c = &pipeline.Compliance{Status: "compliant", Score: 1, Classification: v.Classification}
		x.Compliance = c
	}
	c.Score = min(c.Score, v.Score)
	for _, s := range v.Violations {
		if s = "answer: " + s; !slices.Contains(c.Violations, s) {
			c.Violations = append(c.Violations, s)
		}
	}
	for _, f := range v.Frameworks {
		if !slices.Contains(c.Frameworks, f) {
			c.Frameworks = append(c.Frameworks, f)
		}
	}
	if len(v.Violations) > 0 {
		x.DoNotStore = "compliance"
	}
	switch v.Action {
	case "block":
		c.Status, c.Policy, c.Classification, x.DoNotStore = "blocked", v.Policy, "restricted", "blocked"
		return c, &apierr.Error{Kind: apierr.Forbidden, Code: "policy_violation",
			Message: fmt.Sprintf("answer blocked by compliance policy %q", v.Policy)}
	case "redact", "flag":
		if c.Status == "compliant" {
			c.Status = "flagged"
		}
	}
	return c, nil
}

// answerTexts are the string contents of an OpenAI chat completion's
// choices, with the index of each choice.
func answerTexts(body []byte) ([]string, []int) {
	var a struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &a) != nil {
		return nil, nil
	}
	var texts []string
	var idx []int
	for i, c := range a.Choices {
		if c.Message.Content != nil && *c.Message.Content != "" {
			texts, idx = append(texts, *c.Message.Content), append(idx, i)
		}
	}
	return texts, idx
}

// redactAnswer replaces the contents of the choices idx with redacted.
func redactAnswer(body []byte, idx []int, redacted []string) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, err
	}
	var choices []map[string]json.RawMessage
	if err := json.Unmarshal(fields["choices"], &choices); err != nil {
		return nil, err
	}
	for k, i := range idx {
		if i >= len(choices) || k >= len(redacted) {
			return nil, errors.New("redact: choice out of range")
		}
		var msg map[string]json.RawMessage
		if err := json.Unmarshal(choices[i]["message"], &msg); err != nil {
			return nil, err
		}
		msg["content"], _ = json.Marshal(redacted[k])
		choices[i]["message"], _ = json.Marshal(msg)
	}
	var err error
	if fields["choices"], err = json.Marshal(choices); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}

func (p *Proxy) enforce(ctx context.Context, c EnforceCall) (Verdict, error) {
	timeout := p.d.Compliance.Timeout
	if timeout <= 0 {
		timeout = 8 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return p.d.Enforcer.Enforce(ctx, c)
}

// complyFailed applies the fail-open settings to a failed check: through,
// marked unchecked, or 503 naming the cause.
func (p *Proxy) complyFailed(ctx context.Context, x *pipeline.Exchange, next pipeline.Handler, err error) (*pipeline.Response, error) {
	if !p.failOpen(err) {
		return nil, p.checkError(err)
	}
	p.d.Log.Warn("policy check failed; let through (fail-open)", "request_id", x.ID, "err", err)
	x.Compliance = &pipeline.Compliance{Status: "unchecked_fail_open"}
	x.DoNotStore = "unchecked"
	return next(ctx, x)
}

// failOpen reports whether a failed check lets the exchange through:
// POLICY_FAIL_OPEN for the caller's policies, COMPLIANCE_FAIL_OPEN for the
// check itself (the spec's rule 7).
func (p *Proxy) failOpen(err error) bool {
	if errors.Is(err, ErrPolicyUnavailable) {
		return p.d.Compliance.PolicyFailOpen
	}
	return p.d.Compliance.FailOpen
}

// checkError is the 503 of a failed check that does not fail open.
func (p *Proxy) checkError(err error) error {
	if errors.Is(err, ErrPolicyUnavailable) {
		return apierr.Wrap(apierr.Unavailable, "policy_unavailable", "the caller's policies could not be read (POLICY_FAIL_OPEN is off)", err)
	}
	return apierr.Wrap(apierr.Unavailable, "compliance_unavailable", "the compliance check failed (COMPLIANCE_FAIL_OPEN is off)", err)
}

// textAt locates one checked text: a message's string content (part -1)
// or one text part of it.
type textAt struct{ msg, part int }

// promptTexts are the texts of a chat request's messages: string contents
// and text parts.
func promptTexts(c *llm.ChatRequest) ([]string, []textAt) {
	var texts []string
	var at []textAt
	for i, m := range c.Messages {
		if !m.Content.IsParts {
			if m.Content.Text != "" {
				texts, at = append(texts, m.Content.Text), append(at, textAt{i, -1})
			}
			continue
		}
		for j, part := range m.Content.Parts {
			if part.Text != "" {
				texts, at = append(texts, part.Text), append(at, textAt{i, j})
			}
		}
	}
	return texts, at
}

// redactPrompt returns the request body and decoded request with the texts
// at at replaced by redacted: new values, the caller's left as they were.
func redactPrompt(body []byte, c *llm.ChatRequest, at []textAt, redacted []string) ([]byte, *llm.ChatRequest, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, nil, fmt.Errorf("redact: %w", err)
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(fields["messages"], &msgs); err != nil {
		return nil, nil, fmt.Errorf("redact: messages: %w", err)
	}
	copyReq := *c
	copyReq.Messages = append([]llm.Message(nil), c.Messages...)
	for k, a := range at {
		if a.msg >= len(msgs) {
			return nil, nil, errors.New("redact: message out of range")
		}
		m := copyReq.Messages[a.msg]
		if a.part < 0 {
			m.Content.Text = redacted[k]
			s, _ := json.Marshal(redacted[k])
			msgs[a.msg]["content"] = s
		} else {
			var parts []map[string]json.RawMessage
			if err := json.Unmarshal(msgs[a.msg]["content"], &parts); err != nil || a.part >= len(parts) {
				return nil, nil, fmt.Errorf("redact: content parts of message %d", a.msg)
			}
			m.Content.Parts = append([]llm.Part(nil), m.Content.Parts...)
			m.Content.Parts[a.part].Text = redacted[k]
			s, _ := json.Marshal(redacted[k])
			parts[a.part]["text"] = s
			msgs[a.msg]["content"], _ = json.Marshal(parts)
		}
		copyReq.Messages[a.msg] = m
	}
	var err error
	if fields["messages"], err = json.Marshal(msgs); err != nil {
		return nil, nil, err
	}
	out, err := json.Marshal(fields)
	return out, &copyReq, err
}

// sourceIP is the address the request came from (the TCP peer; behind a
// reverse proxy, the proxy's).
func sourceIP(x *pipeline.Exchange) netip.Addr {
	host, _, err := net.SplitHostPort(x.Inbound.RemoteAddr)
	if err != nil {
		host = x.Inbound.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// Streamed answers are checked as they pass, never buffered: at every
// event that adds text, the last streamWindow bytes of the answer are
// checked under the caller's preset, before the event is sent. A block
// ends the stream with the dialect's error event instead of that event,
// so what may already have left is the finding's earlier chunks only (a
// value split over several events: "536-22-" before "1234" completes the
// SSN) — the detectors need the whole value to see it. A redaction cannot
// take back what was sent: in a stream it is recorded as a flag. Cost: one
// check of at most streamWindow bytes per event, for callers with a preset.
const streamWindow = 512

// checkStream wraps an OpenAI chat stream with the answer check.
func (p *Proxy) checkStream(ctx context.Context, x *pipeline.Exchange, s llm.Stream) llm.Stream {
	var text []byte // the answer's last streamWindow bytes
	delta := chunkText
	if x.Endpoint == pipeline.NativeMessages {
		delta = nativeDeltaText
	}
	return pipeline.Rewrite(s, func(ev sse.Event) (sse.Event, error) {
		d := delta(ev.Data)
		if d == "" {
			return ev, nil
		}
		text = append(text, d...)
		if len(text) > streamWindow {
			text = append(text[:0], text[len(text)-streamWindow:]...)
		}
		v, err := p.enforce(ctx, EnforceCall{Principal: x.Principal, Phase: "answer", Texts: []string{string(text)},
			Provider: x.Provider, Model: x.UpstreamModel, SourceIP: sourceIP(x), Application: x.Inbound.Header.Get("x-svc-application")})
		switch {
		case err != nil && p.failOpen(err):
			return ev, nil
		case err != nil:
			return ev, p.checkError(err)
		case !v.Applied:
			return ev, nil
		}
		_, blocked := answerVerdict(x, v)
		if blocked != nil {
			return ev, blocked // Rewrite ends the stream: nothing after it is read
		}
		return ev, nil
	})
}

// chunkText is the content delta of an OpenAI chat chunk's choices.
func chunkText(data []byte) string {
	var c struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &c) != nil {
		return ""
	}
	var b strings.Builder
	for _, ch := range c.Choices {
		b.WriteString(ch.Delta.Content)
	}
	return b.String()
}
