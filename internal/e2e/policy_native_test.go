package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
)

// TestPoliciesOnTheNativePath: the Anthropic SDK on /native/v1/messages
// with a key under a HIPAA-like preset: an SSN prompt is refused with 403
// in the Anthropic error shape, an e-mail address is redacted before the
// provider sees it.
func TestPoliciesOnTheNativePath(t *testing.T) {
	g, fake := anthropicGateway(t)
	preset := hipaaLikePreset(t, g)
	key, _ := g.newKey(map[string]any{"policy_set": preset})
	client := anthropic.NewClient(aoption.WithBaseURL(g.proxy+"/native"), aoption.WithAPIKey(key), aoption.WithMaxRetries(0))
	ctx := context.Background()
	ask := func(text string) (*anthropic.Message, error) {
		return client.Messages.New(ctx, anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 64,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))}})
	}
	before := posts(fake.Requests())
	_, err := ask("My SSN is 536-22-1234.")
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 403 || !strings.Contains(apiErr.Error(), "no-ssn") {
		t.Fatalf("SSN prompt: %v, want 403 naming no-ssn", err)
	}
	if posts(fake.Requests()) != before {
		t.Error("a blocked prompt reached the provider")
	}
	if _, err := ask("Forward this to jane.doe@example.com please."); err != nil {
		t.Fatal(err)
	}
	sent := string(lastPost(t, fake.Requests()).Body)
	if strings.Contains(sent, "jane.doe@example.com") || !strings.Contains(sent, "[EMAIL]") {
		t.Errorf("the provider received %s, want the address replaced by [EMAIL]", sent)
	}
}
