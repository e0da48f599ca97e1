package tokens

import (
	"strings"

	"github.com/svc-gateway/svc/internal/llm"
)

// Chat overhead, as OpenAI documents it for its chat models ("How to count
// tokens with tiktoken", OpenAI Cookbook): every message costs 3 tokens
// besides its role and content, a name 1 more, and every reply is primed
// with 3.
const (
	tokensPerMessage = 3
	tokensPerName    = 1
	replyPriming     = 3
)

// Tool overhead. OpenAI renders tool definitions into the prompt in a form it
// does not publish; the definitions are counted as their JSON (name,
// description and parameters, which costs more tokens than the rendered form
// with its quotes and braces) plus toolOverhead each and toolsOverhead once.
// A tool call in an assistant message counts its id, name and arguments plus
// toolOverhead.
const (
	toolOverhead  = 12
	toolsOverhead = 12
)

// Media costs, fixed because the bytes are not decoded (an image URL is not
// even fetched); each is the most the models bill.
const (
	// ImageTokens bounds an image for OpenAI models other than gpt-4o-mini:
	// at high detail gpt-4o bills 85 + 170 per 512-px tile, at most 8 tiles
	// (1445); the patch-billed models at most 1536 patches × 1.62 (gpt-4.1-mini),
	// 1.72 (o4-mini) or 2.46 (gpt-4.1-nano): 3779.
	ImageTokens = 3779
	// MiniImageTokens bounds an image for gpt-4o-mini, which bills 2833 + 5667
	// per tile (the same price as gpt-4o's image at its lower token price);
	// MiniLowImageTokens is its detail "low" price.
	MiniImageTokens    = 2833 + 5667*8
	MiniLowImageTokens = 2833
	// OtherImageTokens bounds an image for other models: Claude bills about
	// width × height / 750, at most 4784 at the newest models' largest size;
	// Gemini 258 to 1120.
	OtherImageTokens = 4800
	// AudioBytesPerToken: audio is billed by duration (OpenAI ~10 tokens a
	// second); one token per 100 bytes of base64 bounds it for audio of 6
	// kbit/s and more.
	AudioBytesPerToken = 100
	// FileTokens is an uploaded file referred to by id, whose size is not
	// known: OpenAI bills a PDF's pages as text and images.
	FileTokens = 32768
)

// ChatPrompt returns the prompt tokens of req for model: each message's role,
// name, content (text parts, images, audio, files), refusal and tool calls
// with OpenAI's per-message overhead, the tool definitions, and the reply
// priming. For an OpenAI model it is what OpenAI bills for text messages and
// at least that with tools and media; for others, Conservative per text.
func ChatPrompt(model string, req *llm.ChatRequest) int64 {
	if req == nil {
		return 0
	}
	enc := EncodingFor(model)
	b := budget{left: ExactBytes}
	n := int64(replyPriming)
	for i := range req.Messages {
		n = add(n, b.message(enc, model, &req.Messages[i]))
	}
	if len(req.Tools) > 0 {
		n = add(n, toolsOverhead)
		for i := range req.Tools {
			f := &req.Tools[i].Function
			n = add(n, toolOverhead, b.count(enc, f.Name), b.count(enc, f.Description), b.count(enc, string(f.Parameters)))
		}
	}
	return n
}

// message counts one chat message.
func (b *budget) message(enc Encoding, model string, m *llm.Message) int64 {
	n := add(tokensPerMessage, b.count(enc, m.Role), b.count(enc, m.Refusal), b.count(enc, m.ToolCallID))
	if m.Name != "" {
		n = add(n, tokensPerName, b.count(enc, m.Name))
	}
	if !m.Content.IsParts {
		n = add(n, b.count(enc, m.Content.Text))
	}
	for i := range m.Content.Parts {
		n = add(n, b.part(enc, model, &m.Content.Parts[i]))
	}
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		n = add(n, toolOverhead, b.count(enc, tc.ID), b.count(enc, tc.Function.Name), b.count(enc, tc.Function.Arguments))
	}
	return n
}

// part counts one content part.
func (b *budget) part(enc Encoding, model string, p *llm.Part) int64 {
	n := add(b.count(enc, p.Text), b.count(enc, p.Refusal))
	if p.ImageURL != nil {
		n = add(n, imageTokens(enc, model, p.ImageURL.Detail))
	}
	if p.InputAudio != nil {
		n = add(n, audioTokens(len(p.InputAudio.Data)))
	}
	if f := p.File; f != nil {
		switch {
		case f.FileData != "":
			// A PDF's text and page images, bounded by its size: 1 token per
			// 4 bytes of base64 is ~19k tokens for a 75 KB page.
			n = add(n, int64(len(f.FileData)/4)+1, b.count(enc, f.Filename))
		case f.FileID != "":
			n = add(n, FileTokens)
		}
	}
	return n
}

// imageTokens is the fixed cost of one image for model.
func imageTokens(enc Encoding, model, detail string) int64 {
	switch {
	case enc == Unknown:
		return OtherImageTokens
	case strings.Contains(strings.ToLower(model), "gpt-4o-mini"):
		if detail == "low" {
			return MiniLowImageTokens
		}
		return MiniImageTokens
	}
	return ImageTokens
}

// audioTokens is the cost of base64Len bytes of base64 audio.
func audioTokens(base64Len int) int64 {
	return int64(base64Len/AudioBytesPerToken) + 1
}
