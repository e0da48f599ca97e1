package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// genSpec says what audit entries `svcbench logs` generates.
type genSpec struct {
	entries int
	days    int
	keys    int
	users   int
	seed    uint64
	end     time.Time // every entry is before end, the oldest days before it
}

// genModel is one model of the generator's catalog: its provider, its
// price (USD per million tokens, prompt and completion) and its share of
// its provider's requests.
type genModel struct {
	provider, name string
	in, out        float64
	share          float64
}

// genProviders are ten providers with their share of requests and four
// models each (40 in all), as a mixed fleet of teams would use them.
var genProviders = []struct {
	name   string
	share  float64
	models [4]genModel
}{
	{"openai", 0.35, [4]genModel{{name: "gpt-4o-mini", in: 0.15, out: 0.6}, {name: "gpt-4o", in: 2.5, out: 10}, {name: "gpt-4.1", in: 2, out: 8}, {name: "o3-mini", in: 1.1, out: 4.4}}},
	{"anthropic", 0.20, [4]genModel{{name: "claude-sonnet-4-20250514", in: 3, out: 15}, {name: "claude-3-5-haiku-20241022", in: 0.8, out: 4}, {name: "claude-3-7-sonnet-20250219", in: 3, out: 15}, {name: "claude-opus-4-20250514", in: 15, out: 75}}},
	{"google", 0.12, [4]genModel{{name: "gemini-2.0-flash", in: 0.1, out: 0.4}, {name: "gemini-2.5-pro", in: 1.25, out: 10}, {name: "gemini-1.5-flash", in: 0.075, out: 0.3}, {name: "gemini-2.5-flash", in: 0.3, out: 2.5}}},
	{"azure", 0.10, [4]genModel{{name: "gpt-4o", in: 2.5, out: 10}, {name: "gpt-4o-mini", in: 0.15, out: 0.6}, {name: "gpt-4.1-mini", in: 0.4, out: 1.6}, {name: "text-embedding-3-small", in: 0.02}}},
	{"bedrock", 0.06, [4]genModel{{name: "anthropic.claude-3-5-sonnet-20241022-v2:0", in: 3, out: 15}, {name: "anthropic.claude-3-haiku-20240307-v1:0", in: 0.25, out: 1.25}, {name: "meta.llama3-1-70b-instruct-v1:0", in: 0.72, out: 0.72}, {name: "amazon.nova-pro-v1:0", in: 0.8, out: 3.2}}},
	{"mistral", 0.05, [4]genModel{{name: "mistral-large-latest", in: 2, out: 6}, {name: "mistral-small-latest", in: 0.1, out: 0.3}, {name: "codestral-latest", in: 0.3, out: 0.9}, {name: "open-mistral-nemo", in: 0.15, out: 0.15}}},
	{"groq", 0.04, [4]genModel{{name: "llama-3.1-8b-instant", in: 0.05, out: 0.08}, {name: "llama-3.3-70b-versatile", in: 0.59, out: 0.79}, {name: "gemma2-9b-it", in: 0.2, out: 0.2}, {name: "qwen-qwq-32b", in: 0.29, out: 0.39}}},
	{"cohere", 0.03, [4]genModel{{name: "command-r-plus", in: 2.5, out: 10}, {name: "command-r", in: 0.15, out: 0.6}, {name: "command-a-03-2025", in: 2.5, out: 10}, {name: "embed-english-v3.0", in: 0.1}}},
	{"deepseek", 0.03, [4]genModel{{name: "deepseek-chat", in: 0.27, out: 1.1}, {name: "deepseek-reasoner", in: 0.55, out: 2.19}, {name: "deepseek-coder", in: 0.14, out: 0.28}, {name: "deepseek-v3", in: 0.27, out: 1.1}}},
	{"together", 0.02, [4]genModel{{name: "meta-llama/Llama-3.3-70B-Instruct-Turbo", in: 0.88, out: 0.88}, {name: "Qwen/Qwen2.5-72B-Instruct-Turbo", in: 1.2, out: 1.2}, {name: "deepseek-ai/DeepSeek-R1", in: 3, out: 7}, {name: "mistralai/Mixtral-8x7B-Instruct-v0.1", in: 0.6, out: 0.6}}},
}

// modelShares are the shares of a provider's requests its four models get.
var modelShares = [4]float64{0.5, 0.25, 0.15, 0.1}

// genOutcome is one outcome an entry may have, with its share.
type genOutcome struct {
	share float64
	kind  apierr.Kind // its error; meaningless for status 200
	ok    bool
}

// genOutcomes: 95.5 % answered, the rest the errors a gateway sees most.
var genOutcomes = []genOutcome{
	{0.955, 0, true},
	{0.015, apierr.RateLimited, false},
	{0.008, apierr.UpstreamError, false},
	{0.004, apierr.Unavailable, false},
	{0.003, apierr.UpstreamTimeout, false},
	{0.008, apierr.InvalidRequest, false},
	{0.004, apierr.Unauthenticated, false},
	{0.002, apierr.BudgetExceeded, false},
	{0.001, apierr.ClientClosed, false},
}

// genKey is one virtual key of the generated fleet.
type genKey struct{ id, mask string }

// generator makes realistic audit entries: the i-th entry is a function of
// the spec and i alone, so batches can be generated in any order and in
// parallel, and a run with the same spec makes the same entries.
type generator struct {
	spec   genSpec
	models []genModel // with share = the provider's share × the model's
	keys   []genKey
	users  []string
	// times are the entries' start times (Unix µs), oldest first.
	times []int64
}

// newGenerator prepares the catalog, the keys, the users and the times.
func newGenerator(spec genSpec) *generator {
	g := &generator{spec: spec}
	for _, p := range genProviders {
		for i, m := range p.models {
			m.provider, m.share = p.name, p.share*modelShares[i]
			g.models = append(g.models, m)
		}
	}
	rng := rand.New(rand.NewPCG(spec.seed, 0x5eed))
	for range spec.keys {
		id := randHex(rng, 16)
		g.keys = append(g.keys, genKey{id: "vk_" + id, mask: "sk-svc-" + id[:4] + "…"})
	}
	for range spec.users {
		g.users = append(g.users, "user-"+randHex(rng, 8))
	}
	g.times = genTimes(rng, spec)
	return g
}

// genTimes draws the start times: over spec.days before spec.end, busier on
// working hours (UTC) and weekdays, sorted.
func genTimes(rng *rand.Rand, spec genSpec) []int64 {
	end := spec.end.UnixMicro()
	span := int64(spec.days) * 24 * int64(time.Hour/time.Microsecond)
	out := make([]int64, 0, spec.entries)
	for len(out) < spec.entries {
		us := end - 1 - rng.Int64N(span)
		t := time.UnixMicro(us).UTC()
		w := 0.25 + 0.75*math.Max(0, math.Sin(math.Pi*float64(t.Hour()-6)/14)) // 06:00–20:00
		if t.Weekday() == time.Saturday || t.Weekday() == time.Sunday {
			w *= 0.35
		}
		if rng.Float64() < w {
			out = append(out, us)
		}
	}
	slices.Sort(out)
	return out
}

// record is the i-th entry as the bridge writes it: built by
// audit.FromExchange from an exchange, encoded, and read back by
// audit.RecordFromJSON, as the proxy and the bridge do.
func (g *generator) record(i int) (audit.Record, error) {
	rng := rand.New(rand.NewPCG(g.spec.seed, uint64(i)+1))
	x, upstream := g.exchange(rng, i)
	js, err := json.Marshal(audit.FromExchange(x, upstream))
	if err != nil {
		return audit.Record{}, err
	}
	return audit.RecordFromJSON(js)
}

// exchange is the i-th finished exchange, and its time waiting on the
// provider.
func (g *generator) exchange(rng *rand.Rand, i int) (*pipeline.Exchange, time.Duration) {
	start := time.UnixMicro(g.times[i]).UTC()
	m := g.models[pick(rng, len(g.models), func(j int) float64 { return g.models[j].share })]
	key := g.keys[zipfIndex(rng, len(g.keys), 1.1)]
	x := &pipeline.Exchange{
		ID:              uuidV7(rng, start),
		Start:           start,
		Endpoint:        pipeline.Chat,
		Model:           m.name,
		Provider:        m.provider,
		UpstreamModel:   m.name,
		ResponseModel:   m.name,
		RoutingStrategy: "direct",
		RoutingReason:   "provider:" + m.provider,
		Principal:       &identity.Principal{Kind: identity.VirtualKey, ID: key.id, MaskedKey: key.mask},
		Chat:            &llm.ChatRequest{Model: m.name, Messages: []llm.Message{{Role: "user"}}},
		Status:          200,
		UpstreamStatus:  200,
	}
	switch r := rng.Float64(); {
	case m.out == 0 || r < 0.06:
		x.Endpoint, x.Chat = pipeline.Embeddings, nil
	case r < 0.11:
		x.Endpoint = pipeline.Responses
	case r < 0.13:
		x.Endpoint = pipeline.Completions
	}
	if x.Chat != nil {
		x.Stream = rng.Float64() < 0.45
		if rng.Float64() < 0.85 { // most callers name their end user
			x.Chat.User = g.users[zipfIndex(rng, len(g.users), 1.05)]
		}
		if rng.Float64() < 0.3 { // a conversation: continued turns
			x.ConversationID = "conv_" + randHex(rng, 12)
			if rng.Float64() < 0.7 {
				x.Chat.Messages = append(x.Chat.Messages, llm.Message{Role: "assistant"}, llm.Message{Role: "user"})
			}
		}
	}

	// Tokens and latency: lognormal, longer for streams and big models.
	prompt := int64(lognormal(rng, 600, 1.0)) + 5
	completion := int64(lognormal(rng, 250, 0.9)) + 1
	latency := time.Duration(lognormal(rng, 900, 0.7) * float64(time.Millisecond))
	if x.Stream {
		latency = time.Duration(lognormal(rng, 3500, 0.6) * float64(time.Millisecond))
	}
	if x.Endpoint == pipeline.Embeddings {
		completion, latency = 0, time.Duration(lognormal(rng, 120, 0.5)*float64(time.Millisecond))
	}
	own := time.Duration(lognormal(rng, 1.5, 0.5) * float64(time.Millisecond)) // svc's share
	out := genOutcomes[pick(rng, len(genOutcomes), func(j int) float64 { return genOutcomes[j].share })]
	switch {
	case !out.ok:
		g.fail(rng, x, out.kind, &latency)
		prompt, completion = 0, 0
	case x.Endpoint == pipeline.Chat && rng.Float64() < 0.06: // a semantic cache hit
		saved := prompt + completion
		q := "How do I rotate the API keys of our staging environment?"
		x.Cache = &pipeline.CacheHit{Tier: []string{"L1", "L2", "L3"}[rng.IntN(3)], Key: randHex(rng, 16),
			Similarity: 0.93 + 0.07*rng.Float64(), Query: q, TokensSaved: saved, CostSaved: cost(m, prompt, completion)}
		x.RoutingStrategy, x.RoutingReason = "cache", "cache_hit:tier="+x.Cache.Tier
		x.UpstreamStatus = 0
		prompt, completion, latency, own = 0, 0, 0, time.Duration(lognormal(rng, 4, 0.5)*float64(time.Millisecond))
	case rng.Float64() < 0.02: // served by the fallback provider
		x.RoutingStrategy, x.RoutingReason = "fallback", "fallback:"+m.provider+":after_error"
	}
	x.Usage = llm.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	x.Cost = cost(m, prompt, completion)
	x.Upstream = latency
	x.End = start.Add(latency + own)
	return x, latency
}

// fail makes x an error of kind: refusals before the call (a bad request,
// no or a revoked key, a spent budget) never reach a provider.
func (g *generator) fail(rng *rand.Rand, x *pipeline.Exchange, kind apierr.Kind, latency *time.Duration) {
	x.Err = apierr.New(kind, "bench_"+kind.Type(), "generated failure: "+kind.Type())
	x.Status = kind.Status()
	x.UpstreamStatus = x.Status
	switch kind {
	case apierr.InvalidRequest, apierr.Unauthenticated, apierr.BudgetExceeded:
		x.Provider, x.UpstreamModel, x.ResponseModel, x.RoutingStrategy, x.RoutingReason = "", "", "", "", ""
		x.UpstreamStatus, *latency = 0, 0
		if kind == apierr.Unauthenticated {
			x.Principal = nil
		}
	case apierr.UpstreamTimeout:
		*latency = time.Duration(60+rng.IntN(60)) * time.Second
		x.UpstreamStatus = 0
	case apierr.ClientClosed:
		*latency = time.Duration(lognormal(rng, 5000, 0.8) * float64(time.Millisecond))
	default:
		*latency = time.Duration(lognormal(rng, 300, 0.8) * float64(time.Millisecond))
	}
}

// cost is what the tokens cost at m's price.
func cost(m genModel, prompt, completion int64) float64 {
	return (float64(prompt)*m.in + float64(completion)*m.out) / 1e6
}

// pick draws an index in [0, n) with the weights share(i) (summing to 1).
func pick(rng *rand.Rand, n int, share func(int) float64) int {
	r := rng.Float64()
	for i := range n {
		if r -= share(i); r < 0 {
			return i
		}
	}
	return n - 1
}

// zipfIndex draws an index in [0, n), index 0 the most frequent: a few
// keys and users make most of the traffic, as in a real fleet.
func zipfIndex(rng *rand.Rand, n int, s float64) int {
	return int(rand.NewZipf(rng, s, 1, uint64(n-1)).Uint64())
}

// lognormal draws a value around median with spread sigma.
func lognormal(rng *rand.Rand, median, sigma float64) float64 {
	return median * math.Exp(sigma*rng.NormFloat64())
}

// randHex is n random bytes as hex.
func randHex(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return hex.EncodeToString(b)
}

// uuidV7 is a UUIDv7 of time t, as svc's request ids are (time-ordered).
func uuidV7(rng *rand.Rand, t time.Time) string {
	var u [16]byte
	binary.BigEndian.PutUint64(u[8:], rng.Uint64())
	binary.BigEndian.PutUint64(u[:8], uint64(t.UnixMilli())<<16|uint64(rng.Uint32()&0x0fff))
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(u[:])
	return fmt.Sprintf("%s-%s-%s-%s-%s", h[:8], h[8:12], h[12:16], h[16:20], h[20:])
}
