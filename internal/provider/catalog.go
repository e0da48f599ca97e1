package provider

// Spec describes a provider svc knows: its wire format, default base URL and
// model families. Settings (<NAME>_API_KEY, _API_BASE, _API_VERSION, _ENABLED)
// configure it; any other <NAME>_API_BASE adds an OpenAI-compatible provider.
type Spec struct {
	Name        string
	Format      string // wire format: openai, azure, anthropic, gemini, vertex, bedrock, cohere
	BaseURL     string
	KeyOptional bool
	Families    []string
	// Responses: the provider serves OpenAI's Responses API itself
	// (/responses), so svc forwards it untranslated; others get it
	// translated to chat completions. <NAME>_RESPONSES_API overrides.
	Responses bool
}

// Catalog lists the built-in providers. The OpenAI-compatible ones are
// configuration of the one OpenAI adapter.
var Catalog = []Spec{
	{Name: "openai", Format: "openai", BaseURL: "https://api.openai.com/v1", Responses: true,
		Families: []string{"gpt-", "o1", "o3", "o4", "chatgpt-", "text-embedding-", "davinci", "babbage", "whisper-", "tts-", "dall-e", "gpt-image", "omni-moderation"}},
	{Name: "anthropic", Format: "anthropic", BaseURL: "https://api.anthropic.com", Families: []string{"claude-"}},
	{Name: "gemini", Format: "gemini", BaseURL: "https://generativelanguage.googleapis.com", Families: []string{"gemini-", "gemma-"}},
	{Name: "vertex", Format: "vertex", BaseURL: ""},   // from VERTEX_LOCATION: https://{location}-aiplatform.googleapis.com
	{Name: "bedrock", Format: "bedrock", BaseURL: ""}, // from BEDROCK_REGION: https://bedrock-runtime.{region}.amazonaws.com
	{Name: "cohere", Format: "cohere", BaseURL: "https://api.cohere.com", Families: []string{"command-", "rerank-", "embed-"}},
	{Name: "azure", Format: "azure", BaseURL: ""}, // AZURE_API_BASE: https://{resource}.openai.azure.com
	{Name: "groq", Format: "openai", BaseURL: "https://api.groq.com/openai/v1"},
	{Name: "mistral", Format: "openai", BaseURL: "https://api.mistral.ai/v1"},
	{Name: "deepseek", Format: "openai", BaseURL: "https://api.deepseek.com/v1", Families: []string{"deepseek-"}},
	{Name: "xai", Format: "openai", BaseURL: "https://api.x.ai/v1", Families: []string{"grok-"}},
	{Name: "together", Format: "openai", BaseURL: "https://api.together.xyz/v1"},
	{Name: "fireworks", Format: "openai", BaseURL: "https://api.fireworks.ai/inference/v1"},
	{Name: "openrouter", Format: "openai", BaseURL: "https://openrouter.ai/api/v1"},
	{Name: "perplexity", Format: "openai", BaseURL: "https://api.perplexity.ai"},
	{Name: "cerebras", Format: "openai", BaseURL: "https://api.cerebras.ai/v1"},
	{Name: "ollama", Format: "openai", BaseURL: "http://127.0.0.1:11434/v1", KeyOptional: true},
	{Name: "vllm", Format: "openai", BaseURL: "http://127.0.0.1:8000/v1", KeyOptional: true},
	{Name: "lmstudio", Format: "openai", BaseURL: "http://127.0.0.1:1234/v1", KeyOptional: true},
}
