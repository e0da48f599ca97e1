package quality

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/svc-gateway/svc/internal/cache/verify"
)

// Labels of a Pair: whether the cache should answer B with A's answer.
const (
	LabelHit  = "hit"
	LabelMiss = "miss"
)

// A Pair is two prompts and whether a cache holding A's answer should serve
// it for B. Kind says what the pair tests: "paraphrase" for hits; for misses
// what tells the two apart ("number", "negation", "entity", "language",
// "quoted", "antonym", or "different" for another question sharing words).
type Pair struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Label string `json:"label"`
	Kind  string `json:"kind"`
}

// Load reads pairs from a JSON Lines file, one Pair per line; blank lines are
// skipped. It fails on a malformed line, an empty prompt or an unknown label.
func Load(path string) ([]Pair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pairs []Pair
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var p Pair
		if err := json.Unmarshal(line, &p); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		switch {
		case p.A == "" || p.B == "":
			return nil, fmt.Errorf("%s:%d: empty prompt", path, n)
		case p.Label != LabelHit && p.Label != LabelMiss:
			return nil, fmt.Errorf("%s:%d: label %q, want %q or %q", path, n, p.Label, LabelHit, LabelMiss)
		case p.Kind == "":
			return nil, fmt.Errorf("%s:%d: no kind", path, n)
		}
		pairs = append(pairs, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pairs, nil
}

// Embedder is what the harness needs of an embedder;
// internal/cache/embed.Embedder satisfies it.
type Embedder interface {
	Name() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Similarities returns the cosine similarity of each pair's prompts under e.
func Similarities(ctx context.Context, e Embedder, pairs []Pair) ([]float64, error) {
	texts := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		texts = append(texts, p.A, p.B)
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed with %s: %w", e.Name(), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed with %s: %d vectors for %d texts", e.Name(), len(vecs), len(texts))
	}
	sims := make([]float64, len(pairs))
	for i := range pairs {
		sims[i] = cosine(vecs[2*i], vecs[2*i+1])
	}
	return sims, nil
}

// cosine is the cosine similarity of a and b, 0 when either is zero.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range min(len(a), len(b)) {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Run embeds the pairs with e and evaluates the cache's decisions at
// threshold: a pair is a hit when its similarity is at least threshold and,
// if verify is set, verification agrees that B (the query) may be answered
// with A's (the cached prompt's) answer.
func Run(ctx context.Context, e Embedder, pairs []Pair, threshold float64, verify bool) (Report, error) {
	sims, err := Similarities(ctx, e, pairs)
	if err != nil {
		return Report{}, err
	}
	r := Evaluate(pairs, sims, threshold, verify)
	r.Embedder = e.Name()
	return r, nil
}

// Evaluate is Run on similarities already computed, sims[i] being that of
// pairs[i]; Sweep uses it to try thresholds without embedding again.
func Evaluate(pairs []Pair, sims []float64, threshold float64, verifyOn bool) Report {
	r := Report{Threshold: threshold, Verify: verifyOn, PerKind: map[string]KindStats{}}
	var hits, hitsRaw, hitsVerified, misses, missesRaw, missesVerified int
	for i, p := range pairs {
		sim := sims[i]
		similar := sim >= threshold
		agree, reason := verify.Compare(p.B, p.A)
		verified := similar && agree
		k := r.PerKind[p.Kind]
		k.Label = p.Label
		k.Pairs++
		if similar {
			k.Similar++
		}
		if verified {
			k.Verified++
		}
		if !agree {
			k.Rejected++
		}
		r.PerKind[p.Kind] = k
		served := similar
		if verifyOn {
			served = verified
		}
		ex := Example{Pair: p, Similarity: sim, Reason: reason}
		if p.Label == LabelHit {
			hits++
			hitsRaw += b2i(similar)
			hitsVerified += b2i(verified)
			if !served {
				r.Misses = append(r.Misses, ex)
			}
		} else {
			misses++
			missesRaw += b2i(similar)
			missesVerified += b2i(verified)
			if served {
				r.FalseHits = append(r.FalseHits, ex)
			}
		}
	}
	r.RawParaphraseHitRate = ratio(hitsRaw, hits)
	r.RawFalseHitRate = ratio(missesRaw, misses)
	r.VerifiedParaphraseHitRate = ratio(hitsVerified, hits)
	r.VerifiedFalseHitRate = ratio(missesVerified, misses)
	r.ParaphraseHitRate, r.FalseHitRate = r.RawParaphraseHitRate, r.RawFalseHitRate
	if verifyOn {
		r.ParaphraseHitRate, r.FalseHitRate = r.VerifiedParaphraseHitRate, r.VerifiedFalseHitRate
	}
	return r
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}
