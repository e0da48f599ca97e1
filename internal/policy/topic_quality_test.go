package policy

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"testing"

	"context"

	"github.com/svc-gateway/svc/internal/cache/embed"
	"github.com/svc-gateway/svc/internal/wordvec"
)

// topicExample is one line of testdata/topics.jsonl: whether Text is about
// Topic, and which half (tune, heldout) it belongs to.
type topicExample struct {
	Topic string `json:"topic"`
	Text  string `json:"text"`
	Match bool   `json:"match"`
	Split string `json:"split"`
}

func loadTopicExamples(t *testing.T) []topicExample {
	t.Helper()
	f, err := os.Open("testdata/topics.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []topicExample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ex topicExample
		if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
			t.Fatal(err)
		}
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// topicScore is the similarity Evaluate compares with the threshold: the
// best window of text against the best of the topics "Do not discuss
// <topic>." compiles to.
func topicScore(t testing.TB, e TopicEmbedder, topic, text string) float64 {
	best := float32(-1)
	for _, tp := range Compile("Do not discuss " + topic + ".").Topics {
		tv := embedOne(t, e, tp)
		for _, w := range splitWindows(text) {
			best = max(best, embed.Cosine(tv, embedOne(t, e, text[w.start:w.end])))
		}
	}
	return float64(best)
}

func embedOne(t testing.TB, e TopicEmbedder, text string) []float32 {
	vs, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

type prf struct{ p, r, f1 float64 }

func score(exs []topicExample, scores []float64, split string, th float64) prf {
	var tp, fp, fn float64
	for i, ex := range exs {
		if ex.Split != split {
			continue
		}
		hit := scores[i] >= th
		switch {
		case hit && ex.Match:
			tp++
		case hit:
			fp++
		case ex.Match:
			fn++
		}
	}
	var m prf
	if tp+fp > 0 {
		m.p = tp / (tp + fp)
	}
	if tp+fn > 0 {
		m.r = tp / (tp + fn)
	}
	if m.p+m.r > 0 {
		m.f1 = 2 * m.p * m.r / (m.p + m.r)
	}
	return m
}

// TestTopicThreshold measures topic matching on the labelled set: the
// threshold with the best F1 on the tune half must be TopicThreshold (to
// 0.05), and the held-out half must keep its precision.
func TestTopicThreshold(t *testing.T) {
	exs := loadTopicExamples(t)
	e := wordvec.New()
	scores := make([]float64, len(exs))
	for i, ex := range exs {
		scores[i] = topicScore(t, e, ex.Topic, ex.Text)
	}
	// A topic usually blocks: the threshold is the one of best F1 on the
	// tune half among those keeping a precision of 0.75.
	bestTh, best := 1.0, prf{}
	for th := 0.99; th >= 0.05; th -= 0.01 {
		m := score(exs, scores, "tune", th)
		if testing.Verbose() {
			t.Logf("threshold %.2f: tune P %.3f R %.3f F1 %.3f", th, m.p, m.r, m.f1)
		}
		if m.p >= 0.75 && m.f1 > best.f1+1e-9 {
			bestTh, best = th, m
		}
	}
	tune := score(exs, scores, "tune", TopicThreshold)
	held := score(exs, scores, "heldout", TopicThreshold)
	t.Logf("best tune threshold %.2f (F1 %.3f); at TopicThreshold %.2f: tune P %.3f R %.3f F1 %.3f; held-out P %.3f R %.3f F1 %.3f",
		bestTh, best.f1, TopicThreshold, tune.p, tune.r, tune.f1, held.p, held.r, held.f1)
	if math.Abs(bestTh-TopicThreshold) > 0.02 {
		t.Errorf("tune-optimal threshold %.2f, want TopicThreshold %.2f within 0.02", bestTh, TopicThreshold)
	}
	// Figures with wordvec: held-out P 0.867 R 0.867 F1 0.867 (the
	// lexical embed.Local it replaced: recall 0.13).
	if held.p < 0.75 || held.f1 < 0.8 {
		t.Errorf("held-out precision %.3f F1 %.3f, want >= 0.75 and >= 0.8", held.p, held.f1)
	}
	if testing.Verbose() {
		for i, ex := range exs {
			t.Logf("%-8s %-5v %.3f %s | %s", ex.Split, ex.Match, scores[i], ex.Topic, ex.Text)
		}
	}
}
