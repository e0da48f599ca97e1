package docs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/policy"
)

// ModelRefiner refines drafted policies with a chat model reached through
// svc's own proxy (an OpenAI-compatible /chat/completions), with a virtual
// key of its own: the calls are budgeted, rate-limited and audited like any
// other. It may reword a draft's name and content and adjust its priority
// and confidence; it cannot add drafts, drop the compiler lines' meaning
// checks, or change ids. A failed or malformed answer is an error (the
// rule-based drafts then stand).
type ModelRefiner struct {
	// BaseURL is the proxy's /v1 (http://127.0.0.1:7775/v1).
	BaseURL string
	// Key is the refiner's virtual key.
	Key   string
	Model string
	// Client defaults to one with a 60 s timeout.
	Client *http.Client
}

var _ Refiner = (*ModelRefiner)(nil)

// refineBatch bounds the drafts sent in one request.
const refineBatch = 40

const refinePrompt = `You improve policy drafts extracted from a company's document.
Each draft has an id, a name, a content (the rule in words, then lines such as "Detectors: SSN", "Action: block", "Applies to: both") and a priority 0-100.
Answer with a JSON array only, one object per draft, same ids, fields: id, name (short, specific), content (keep every "Detectors:", "Action:", "Applies to:" line as given; you may reword the sentence before them), priority (0-100), confidence (0-1).`

// Refine implements Refiner.
func (r *ModelRefiner) Refine(ctx context.Context, drafts []policy.Suggestion, _ Document) ([]policy.Suggestion, error) {
	out := make([]policy.Suggestion, 0, len(drafts))
	for i := 0; i < len(drafts); i += refineBatch {
		part := drafts[i:min(len(drafts), i+refineBatch)]
		refined, err := r.refine(ctx, part)
		if err != nil {
			return nil, err
		}
		out = append(out, refined...)
	}
	return out, nil
}

type refineItem struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Content    string  `json:"content"`
	Priority   int     `json:"priority"`
	Confidence float64 `json:"confidence"`
}

func (r *ModelRefiner) refine(ctx context.Context, drafts []policy.Suggestion) ([]policy.Suggestion, error) {
	items := make([]refineItem, len(drafts))
	for i, d := range drafts {
		items[i] = refineItem{ID: d.ID, Name: d.Name, Content: d.Content, Priority: d.Priority, Confidence: d.Confidence}
	}
	in, _ := json.Marshal(items)
	body, _ := json.Marshal(map[string]any{"model": r.Model, "temperature": 0, "messages": []map[string]string{
		{"role": "system", "content": refinePrompt}, {"role": "user", "content": string(in)}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(r.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.Key)
	client := r.Client
	if client == nil {
		client = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("refine: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("refine: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("refine: the model answered %d", resp.StatusCode)
	}
	var ans struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil || len(ans.Choices) == 0 {
		return nil, errors.New("refine: not a chat completion")
	}
	return mergeRefined(drafts, ans.Choices[0].Message.Content)
}

// mergeRefined applies the model's answer to the drafts: only known ids,
// only bounded values, and a content that keeps the draft's compiler lines.
func mergeRefined(drafts []policy.Suggestion, answer string) ([]policy.Suggestion, error) {
	answer = strings.TrimSpace(answer)
	answer = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(answer, "```json"), "```"), "```")
	var items []refineItem
	if err := json.Unmarshal([]byte(strings.TrimSpace(answer)), &items); err != nil {
		return nil, fmt.Errorf("refine: the model's answer is not a JSON array: %w", err)
	}
	byID := make(map[string]refineItem, len(items))
	for _, it := range items {
		byID[it.ID] = it
	}
	out := make([]policy.Suggestion, len(drafts))
	for i, d := range drafts {
		out[i] = d
		it, ok := byID[d.ID]
		if !ok {
			continue
		}
		if n := strings.TrimSpace(it.Name); n != "" && len(n) <= policy.MaxName {
			out[i].Name = n
		}
		if c := strings.TrimSpace(it.Content); c != "" && len(c) <= policy.MaxContent && keepsLines(d.Content, c) {
			out[i].Content = c
		}
		if it.Priority >= 0 && it.Priority <= 100 && it.Priority != 0 {
			out[i].Priority = it.Priority
		}
		if it.Confidence > 0 && it.Confidence <= 1 {
			out[i].Confidence = it.Confidence
		}
	}
	return out, nil
}

// keepsLines reports whether refined keeps every compiler line of draft.
func keepsLines(draft, refined string) bool {
	for _, line := range strings.Split(draft, "\n") {
		l := strings.TrimSpace(line)
		for _, prefix := range []string{"Detectors:", "Action:", "Applies to:", "Keywords:", "Topics:", "Min score:"} {
			if strings.HasPrefix(l, prefix) && !strings.Contains(refined, l) {
				return false
			}
		}
	}
	return true
}
