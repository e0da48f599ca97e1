package alerts

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The payloads: one pure function per platform, from an Alert to the JSON
// body its incoming webhook documents. Every text is clipped to the
// platform's documented limits, so an alert never fails delivery for its
// size; text a caller wrote (a Custom alert) cannot mention or ping anyone.

// Platform names, as the metrics and the delivery status name them.
const (
	Slack   = "slack"
	Teams   = "teams"
	Discord = "discord"
)

// payload encodes a for platform.
func payload(platform string, a Alert) ([]byte, error) {
	switch platform {
	case Slack:
		return json.Marshal(slackMessage(a))
	case Teams:
		return json.Marshal(teamsMessage(a))
	default:
		return json.Marshal(discordMessage(a))
	}
}

// clip returns s cut to at most n characters (runes), ending in "…" when cut.
func clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n-1 {
			return s[:i] + "…"
		}
		count++
	}
	return s
}

// sortedFields returns a's field names in order.
func sortedFields(a Alert) []string { return slices.Sorted(maps.Keys(a.Fields)) }

// footer is the line of context under an alert.
func footer(a Alert) string {
	return "svc · " + string(a.Type) + " · " + string(a.Severity) + " · " + a.Time.UTC().Format(time.RFC3339)
}

// Slack: an incoming webhook takes a message payload, `text` (the
// notification and fallback text) and Block Kit `blocks`
// (https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks;
// blocks: https://docs.slack.dev/reference/block-kit/blocks). Limits: a header's
// plain_text 150 characters, a section's text 3000, up to 10 section fields of
// 2000 each. mrkdwn text escapes &, < and >, so alert text cannot form links
// or mentions (<!channel>, <@U…>).

type slackPayload struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Fields   []slackText `json:"fields,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

type slackText struct {
	Type  string `json:"type"` // plain_text or mrkdwn
	Text  string `json:"text"`
	Emoji bool   `json:"emoji,omitempty"`
}

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func slackEscape(s string) string { return slackEscaper.Replace(s) }

func slackMessage(a Alert) slackPayload {
	p := slackPayload{Text: clip(slackEscape(label(a)), 3000)}
	p.Blocks = append(p.Blocks, slackBlock{Type: "header", Text: &slackText{Type: "plain_text", Text: clip(a.Title, 150), Emoji: true}})
	if a.Message != "" {
		p.Blocks = append(p.Blocks, slackBlock{Type: "section", Text: &slackText{Type: "mrkdwn", Text: clip(slackEscape(a.Message), 3000)}})
	}
	var fields []slackText
	for _, k := range sortedFields(a) {
		if len(fields) == 10 {
			break
		}
		fields = append(fields, slackText{Type: "mrkdwn", Text: clip("*"+slackEscape(k)+"*\n"+slackEscape(a.Fields[k]), 2000)})
	}
	if len(fields) > 0 {
		p.Blocks = append(p.Blocks, slackBlock{Type: "section", Fields: fields})
	}
	p.Blocks = append(p.Blocks, slackBlock{Type: "context", Elements: []slackText{{Type: "mrkdwn", Text: slackEscape(footer(a))}}})
	return p
}

// Microsoft Teams: an incoming webhook (or a Workflows webhook) takes a
// message with an Adaptive Card attachment: {"type":"message",
// "attachments":[{"contentType":"application/vnd.microsoft.card.adaptive",
// "contentUrl":null,"content":{AdaptiveCard}}]}, as "Send Adaptive Cards
// using an Incoming Webhook" documents
// (https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using#send-adaptive-cards-using-an-incoming-webhook).
// The card: version 1.2 TextBlocks and a FactSet
// (https://adaptivecards.io/explorer/). Adaptive Cards have no mentions
// unless an entity is declared, which svc never does.

type teamsPayload struct {
	Type        string            `json:"type"`
	Attachments []teamsAttachment `json:"attachments"`
}

type teamsAttachment struct {
	ContentType string    `json:"contentType"`
	ContentURL  *string   `json:"contentUrl"`
	Content     teamsCard `json:"content"`
}

type teamsCard struct {
	Schema  string         `json:"$schema"`
	Type    string         `json:"type"`
	Version string         `json:"version"`
	Body    []teamsElement `json:"body"`
}

type teamsElement struct {
	Type     string      `json:"type"` // TextBlock or FactSet
	Text     string      `json:"text,omitempty"`
	Weight   string      `json:"weight,omitempty"`
	Size     string      `json:"size,omitempty"`
	Color    string      `json:"color,omitempty"`
	IsSubtle bool        `json:"isSubtle,omitempty"`
	Wrap     bool        `json:"wrap,omitempty"`
	Facts    []teamsFact `json:"facts,omitempty"`
}

type teamsFact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

// teamsColor is a TextBlock color by severity.
func teamsColor(s Severity) string {
	switch s {
	case Critical:
		return "Attention"
	case Warning:
		return "Warning"
	}
	return "Accent"
}

func teamsMessage(a Alert) teamsPayload {
	body := []teamsElement{{Type: "TextBlock", Text: clip(label(a), 500), Weight: "Bolder", Size: "Medium", Color: teamsColor(a.Severity), Wrap: true}}
	if a.Message != "" {
		body = append(body, teamsElement{Type: "TextBlock", Text: clip(a.Message, 4000), Wrap: true})
	}
	if len(a.Fields) > 0 {
		facts := teamsElement{Type: "FactSet"}
		for _, k := range sortedFields(a) {
			facts.Facts = append(facts.Facts, teamsFact{Title: clip(k, 200), Value: clip(a.Fields[k], 1000)})
		}
		body = append(body, facts)
	}
	body = append(body, teamsElement{Type: "TextBlock", Text: footer(a), Size: "Small", IsSubtle: true, Wrap: true})
	return teamsPayload{Type: "message", Attachments: []teamsAttachment{{
		ContentType: "application/vnd.microsoft.card.adaptive",
		Content: teamsCard{Schema: "http://adaptivecards.io/schemas/adaptive-card.json", Type: "AdaptiveCard",
			Version: "1.2", Body: body},
	}}}
}

// Discord: Execute Webhook takes `content` (up to 2000 characters) and up to
// 10 `embeds` (https://discord.com/developers/docs/resources/webhook#execute-webhook);
// an embed's limits are title 256, description 4096, 25 fields of name 256
// and value 1024, footer 2048, 6000 characters in all
// (https://discord.com/developers/docs/resources/message#embed-object-embed-limits).
// `allowed_mentions` with an empty `parse` list stops @everyone, @here and
// user or role mentions in alert text, as the webhook guide advises for
// user-generated strings.

type discordPayload struct {
	Content         string          `json:"content"`
	Embeds          []discordEmbed  `json:"embeds"`
	AllowedMentions discordMentions `json:"allowed_mentions"`
}

type discordEmbed struct {
	Title       string         `json:"title"`
	Description string         `json:"description,omitempty"`
	Color       int            `json:"color"`
	Timestamp   string         `json:"timestamp"`
	Fields      []discordField `json:"fields,omitempty"`
	Footer      discordFooter  `json:"footer"`
}

type discordField struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline"`
}

type discordFooter struct {
	Text string `json:"text"`
}

type discordMentions struct {
	Parse []string `json:"parse"`
}

// The embed colours by severity (Discord's red, yellow and blurple).
const (
	discordRed    = 0xED4245
	discordYellow = 0xFEE75C
	discordBlue   = 0x5865F2
)

func discordColor(s Severity) int {
	switch s {
	case Critical:
		return discordRed
	case Warning:
		return discordYellow
	}
	return discordBlue
}

// discordEmbedMax is the documented bound on the characters of one embed;
// discordFieldsMax is what the fields may take of it, leaving the rest to
// the title, footer and description.
const (
	discordEmbedMax  = 6000
	discordFieldsMax = 2500
)

func discordMessage(a Alert) discordPayload {
	e := discordEmbed{Title: clip(a.Title, 256), Color: discordColor(a.Severity),
		Timestamp: a.Time.UTC().Format(time.RFC3339), Footer: discordFooter{Text: clip(footer(a), 2048)}}
	used := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Footer.Text)
	fieldChars := 0
	for _, k := range sortedFields(a) {
		v := a.Fields[k]
		if v == "" {
			v = "-" // a field's value may not be empty
		}
		f := discordField{Name: clip(k, 256), Value: clip(v, 1024), Inline: true}
		n := utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Value)
		if len(e.Fields) == 25 || fieldChars+n > discordFieldsMax {
			break
		}
		fieldChars += n
		e.Fields = append(e.Fields, f)
	}
	used += fieldChars
	if a.Message != "" {
		e.Description = clip(a.Message, min(4096, discordEmbedMax-used))
	}
	return discordPayload{Content: clip(label(a), 2000), Embeds: []discordEmbed{e},
		AllowedMentions: discordMentions{Parse: []string{}}}
}
