package alerts_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/alerts"
)

// The platforms' documented incoming-webhook shapes, written from their
// documentation (not from the package's types): each body must decode into
// its shape with no member the platform does not define.

// slackMessage: https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks
// and the Block Kit reference (header, section, context blocks; text objects).
type slackMessage struct {
	Text   string `json:"text"`
	Blocks []struct {
		Type     string         `json:"type"`
		Text     *slackTextObj  `json:"text"`
		Fields   []slackTextObj `json:"fields"`
		Elements []slackTextObj `json:"elements"`
	} `json:"blocks"`
}

type slackTextObj struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	Emoji bool   `json:"emoji"`
}

// teamsMessage: "Send Adaptive Cards using an Incoming Webhook" (Microsoft
// Teams platform docs) and the Adaptive Card 1.2 schema (TextBlock, FactSet).
type teamsMessage struct {
	Type        string `json:"type"`
	Attachments []struct {
		ContentType string  `json:"contentType"`
		ContentURL  *string `json:"contentUrl"`
		Content     struct {
			Schema  string `json:"$schema"`
			Type    string `json:"type"`
			Version string `json:"version"`
			Body    []struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				Weight   string `json:"weight"`
				Size     string `json:"size"`
				Color    string `json:"color"`
				IsSubtle bool   `json:"isSubtle"`
				Wrap     bool   `json:"wrap"`
				Facts    []struct {
					Title string `json:"title"`
					Value string `json:"value"`
				} `json:"facts"`
			} `json:"body"`
		} `json:"content"`
	} `json:"attachments"`
}

// discordMessage: Discord's Execute Webhook JSON params and the embed object.
type discordMessage struct {
	Content string `json:"content"`
	Embeds  []struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		Color       int    `json:"color"`
		Timestamp   string `json:"timestamp"`
		Fields      []struct {
			Name   string `json:"name"`
			Value  string `json:"value"`
			Inline bool   `json:"inline"`
		} `json:"fields"`
		Footer struct {
			Text string `json:"text"`
		} `json:"footer"`
	} `json:"embeds"`
	AllowedMentions *struct {
		Parse []string `json:"parse"`
	} `json:"allowed_mentions"`
}

func decodeStrict(t *testing.T, b []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("payload does not decode into the documented shape: %v\n%s", err, b)
	}
}

// deliverOne sends a through a Notifier with a receiver per platform and
// returns each platform's body.
func deliverOne(t *testing.T, a alerts.Alert) (slack, teams, discord []byte) {
	t.Helper()
	rs, rt, rd := newReceiver(t, always(200)), newReceiver(t, always(200)), newReceiver(t, always(http.StatusNoContent))
	n := start(t, alerts.Options{Slack: rs.srv.URL, Teams: rt.srv.URL, Discord: rd.srv.URL})
	if !n.Send(a) {
		t.Fatal("Send refused the alert")
	}
	return rs.next(t), rt.next(t), rd.next(t)
}

func runes(s string) int { return utf8.RuneCountInString(s) }

func TestPayloadFormats(t *testing.T) {
	when := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		sev          alerts.Severity
		teamsColor   string
		discordColor int
	}{
		{alerts.Critical, "Attention", 0xED4245},
		{alerts.Warning, "Warning", 0xFEE75C},
		{alerts.Info, "Accent", 0x5865F2},
	} {
		t.Run(string(tc.sev), func(t *testing.T) {
			a := alerts.NewCustom("Spend <!channel> & @everyone", "Body <@U123> & more", tc.sev, when)
			a.Fields = map[string]string{"provider": "openai", "day": "2026-05-01"}
			sb, tb, db := deliverOne(t, a)

			var s slackMessage
			decodeStrict(t, sb, &s)
			if !strings.Contains(s.Text, "Spend &lt;!channel&gt; &amp; @everyone") {
				t.Errorf("Slack text %q: want the title with &, < and > escaped", s.Text)
			}
			types := []string{}
			for _, b := range s.Blocks {
				types = append(types, b.Type)
			}
			if diff := cmp.Diff([]string{"header", "section", "section", "context"}, types); diff != "" {
				t.Errorf("Slack block types (-want +got):\n%s", diff)
			}
			if h := s.Blocks[0].Text; h == nil || h.Type != "plain_text" || h.Text != a.Title {
				t.Errorf("Slack header = %+v, want plain_text %q", h, a.Title)
			}
			if m := s.Blocks[1].Text; m == nil || m.Type != "mrkdwn" || m.Text != "Body &lt;@U123&gt; &amp; more" {
				t.Errorf("Slack message section = %+v, want escaped mrkdwn", m)
			}
			if f := s.Blocks[2].Fields; len(f) != 2 || f[0].Text != "*day*\n2026-05-01" || f[1].Type != "mrkdwn" {
				t.Errorf("Slack fields = %+v, want day then provider as mrkdwn", f)
			}

			var m teamsMessage
			decodeStrict(t, tb, &m)
			if m.Type != "message" || len(m.Attachments) != 1 {
				t.Fatalf("Teams message type %q with %d attachments, want message with 1", m.Type, len(m.Attachments))
			}
			att := m.Attachments[0]
			if att.ContentType != "application/vnd.microsoft.card.adaptive" || att.ContentURL != nil ||
				att.Content.Type != "AdaptiveCard" || att.Content.Version != "1.2" ||
				att.Content.Schema != "http://adaptivecards.io/schemas/adaptive-card.json" {
				t.Errorf("Teams attachment = %+v, want an Adaptive Card 1.2 attachment", att)
			}
			body := att.Content.Body
			if len(body) != 4 || body[0].Type != "TextBlock" || body[0].Color != tc.teamsColor || !strings.Contains(body[0].Text, a.Title) ||
				body[1].Text != a.Message || body[2].Type != "FactSet" || len(body[2].Facts) != 2 || body[2].Facts[1].Title != "provider" {
				t.Errorf("Teams card body = %+v, want title (%s), message, facts, footer", body, tc.teamsColor)
			}

			var d discordMessage
			decodeStrict(t, db, &d)
			if d.AllowedMentions == nil || d.AllowedMentions.Parse == nil || len(d.AllowedMentions.Parse) != 0 {
				t.Errorf("Discord allowed_mentions = %+v, want parse: [] (no pings from alert text)", d.AllowedMentions)
			}
			if len(d.Embeds) != 1 {
				t.Fatalf("Discord embeds = %d, want 1", len(d.Embeds))
			}
			e := d.Embeds[0]
			if e.Color != tc.discordColor || e.Title != a.Title || e.Description != a.Message || len(e.Fields) != 2 {
				t.Errorf("Discord embed = %+v, want colour %#x, the title, the message and 2 fields", e, tc.discordColor)
			}
			if ts, err := time.Parse(time.RFC3339, e.Timestamp); err != nil || !ts.Equal(when) {
				t.Errorf("Discord timestamp %q, want %s", e.Timestamp, when.Format(time.RFC3339))
			}
			if !strings.Contains(d.Content, a.Title) || !strings.Contains(d.Content, strings.ToUpper(string(tc.sev))) {
				t.Errorf("Discord content %q: want the severity and title", d.Content)
			}
		})
	}
}

// TestPayloadLimits: an oversized alert is clipped to each platform's
// documented limits rather than refused by the platform.
func TestPayloadLimits(t *testing.T) {
	a := alerts.NewCustom(strings.Repeat("T", 400), strings.Repeat("é", 9000), alerts.Critical, time.Now())
	a.Fields = map[string]string{}
	for i := range 40 {
		a.Fields[fmt.Sprintf("field%02d%s", i, strings.Repeat("n", 300))] = strings.Repeat("v", 2000)
	}
	sb, _, db := deliverOne(t, a)

	var s slackMessage
	decodeStrict(t, sb, &s)
	for _, b := range s.Blocks {
		if b.Type == "header" && runes(b.Text.Text) > 150 {
			t.Errorf("Slack header has %d characters, over 150", runes(b.Text.Text))
		}
		if b.Text != nil && runes(b.Text.Text) > 3000 {
			t.Errorf("Slack %s text has %d characters, over 3000", b.Type, runes(b.Text.Text))
		}
		if len(b.Fields) > 10 {
			t.Errorf("Slack section has %d fields, over 10", len(b.Fields))
		}
		for _, f := range b.Fields {
			if runes(f.Text) > 2000 {
				t.Errorf("Slack field has %d characters, over 2000", runes(f.Text))
			}
		}
	}

	var d discordMessage
	decodeStrict(t, db, &d)
	e := d.Embeds[0]
	total := runes(e.Title) + runes(e.Description) + runes(e.Footer.Text)
	for _, f := range e.Fields {
		if runes(f.Name) > 256 || runes(f.Value) > 1024 {
			t.Errorf("Discord field of %d/%d characters, over 256/1024", runes(f.Name), runes(f.Value))
		}
		total += runes(f.Name) + runes(f.Value)
	}
	if runes(d.Content) > 2000 || runes(e.Title) > 256 || runes(e.Description) > 4096 || len(e.Fields) > 25 || total > 6000 {
		t.Errorf("Discord content %d, title %d, description %d, %d fields, %d in all: over the limits (2000, 256, 4096, 25, 6000)",
			runes(d.Content), runes(e.Title), runes(e.Description), len(e.Fields), total)
	}
	if e.Description == "" || !strings.HasSuffix(e.Description, "…") {
		t.Errorf("Discord description should be the message clipped with an ellipsis")
	}
}

func TestBudgetAlerts(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		a       alerts.Alert
		sev     alerts.Severity
		subject string
		title   string
	}{
		{"key at 80%", alerts.NewKeyBudget("key_1", "monthly", 100, 80, now), alerts.Warning, "budget:key:key_1:monthly:80", "Virtual key key_1 reached 80% of its monthly budget"},
		{"key at 100%", alerts.NewKeyBudget("key_1", "monthly", 100, 100.5, now), alerts.Critical, "budget:key:key_1:monthly:100", "Virtual key key_1 reached 100% of its monthly budget"},
		{"provider at 80%", alerts.NewProviderBudget("openai", "2026-05-01", 50, 41, now), alerts.Warning, "budget:provider:openai:2026-05-01:80", "Provider openai reached 80% of its daily budget"},
		{"provider at 100%", alerts.NewProviderBudget("openai", "2026-05-01", 50, 50, now), alerts.Critical, "budget:provider:openai:2026-05-01:100", "Provider openai reached 100% of its daily budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.a
			if a.Type != alerts.BudgetThreshold || a.Severity != tc.sev || a.Subject != tc.subject || a.Title != tc.title || a.ID == "" || !a.Time.Equal(now) {
				t.Errorf("got %+v, want a %s BudgetThreshold, subject %q, title %q", a, tc.sev, tc.subject, tc.title)
			}
		})
	}
	if a := alerts.NewKeyBudget("k", "daily", 10, 8, now); a.Fields["spent_usd"] != "$8.00" || a.Fields["percent"] != "80.0%" {
		t.Errorf("fields = %v, want spent_usd $8.00 and percent 80.0%%", a.Fields)
	}
}
