package apierr

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Incorrect API key provided: sk-proj-abc123456789xyz.", "Incorrect API key provided: [redacted]."},
		{"bad key sk-ant-api03-abcdefgh", "bad key [redacted]"},
		{"key AIzaSyA1234567890abcdefghijklmnop is invalid", "key [redacted] is invalid"},
		{"token ya29.a0AfH6SMBx expired", "token [redacted] expired"},
		{"The security token AKIAIOSFODNN7EXAMPLE is invalid", "The security token [redacted] is invalid"},
		{"Authorization: Bearer abc.def.ghi failed", "Authorization: [redacted] failed"},
		{"run a risk-assessment of the task-planner", "run a risk-assessment of the task-planner"},
		{"max_tokens must be at most 4096", "max_tokens must be at most 4096"},
	}
	for _, c := range cases {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := strings.Repeat("é", 1500) // 3000 bytes
	if got := Redact(long); !utf8.ValidString(got) || len(got) > maxProviderMessage+len("…") {
		t.Errorf("long message cut to %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}

// Alphabets of fakeKey.
const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lowerAN = "abcdefghijklmnopqrstuvwxyz0123456789"
	hex     = "0123456789abcdef"
	upperAN = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b64     = alnum + "+/"
	urlSafe = alnum + "_-"
)

// fakeKey is a key of the given shape: prefix, then n characters of
// alphabet, then suffix, drawn from a generator seeded by the shape (the
// repository holds no key-like literals, and runs repeat).
func fakeKey(prefix string, n int, alphabet, suffix string) string {
	r := rand.New(rand.NewPCG(uint64(len(prefix)*131+n), uint64(len(alphabet))))
	b := []byte(prefix)
	for range n {
		b = append(b, alphabet[r.IntN(len(alphabet))])
	}
	return string(b) + suffix
}

// TestRedactShapes checks each provider's key format, as the provider and
// the secret scanners (gitleaks, Kingfisher, TruffleHog) document it, is
// redacted where a provider would echo it.
func TestRedactShapes(t *testing.T) {
	keys := []struct{ name, key string }{
		{"OpenAI project", fakeKey("sk-proj-", 74, urlSafe, "T3BlbkFJ"+fakeKey("", 20, alnum, ""))},
		{"OpenAI legacy", fakeKey("sk-", 48, alnum, "")},
		{"OpenAI masked", "sk-proj-ab**********************************wxyz"},
		{"Anthropic", fakeKey("sk-ant-api03-", 93, urlSafe, "AA")},
		{"Anthropic admin", fakeKey("sk-ant-admin01-", 93, urlSafe, "AA")},
		{"OpenRouter", fakeKey("sk-or-v1-", 64, hex, "")},
		{"DeepSeek", fakeKey("sk-", 32, hex, "")},
		{"Google", fakeKey("AIza", 35, urlSafe, "")},
		{"AWS access key id", fakeKey("AKIA", 16, upperAN, "")},
		{"AWS STS key id", fakeKey("ASIA", 16, upperAN, "")},
		{"Bedrock API key", fakeKey("ABSK", 80, b64, "=")},
		{"Groq", fakeKey("gsk_", 52, alnum, "")},
		{"xAI", fakeKey("xai-", 80, alnum, "")},
		{"Perplexity", fakeKey("pplx-", 48, alnum, "")},
		{"Cerebras", fakeKey("csk-", 48, lowerAN, "")},
		{"Fireworks", fakeKey("fw_", 24, alnum, "")},
		{"Together new", fakeKey("tgp_v1_", 43, urlSafe, "")},
		{"Together legacy", fakeKey("", 64, hex, "")},
		{"Hugging Face", fakeKey("hf_", 34, letters, "")},
		{"GitHub classic", fakeKey("ghp_", 36, alnum, "")},
		{"GitHub fine-grained", fakeKey("github_pat_", 82, alnum+"_", "")},
		{"NVIDIA", fakeKey("nvapi-", 64, urlSafe, "")},
		{"Azure OpenAI classic", fakeKey("", 32, hex, "")},
		{"Azure AI services", fakeKey("", 52, alnum, "JQQJ99"+fakeKey("", 26, alnum, ""))},
		{"Mistral", fakeKey("", 32, alnum, "")},
		{"Cohere", fakeKey("", 40, alnum, "")},
		{"masked", "gsk_ab************wxyz"},
	}
	for _, k := range keys {
		for _, tmpl := range []string{
			"Invalid API key: %s.",
			"invalid value '%s' for 'user'",
			`{"api_key":"%s"}`,
			"key=%s&alt=sse",
			"%s",
		} {
			in := strings.Replace(tmpl, "%s", k.key, 1)
			got := RedactShapes(in)
			if strings.Contains(got, k.key) || !strings.Contains(got, redacted) {
				t.Errorf("%s: RedactShapes(%q) = %q, want the key redacted", k.name, in, got)
			}
		}
	}
	// Labelled secrets: the label stays, the value goes.
	secret := fakeKey("", 38, b64, "+/")
	labelled := []struct{ in, want string }{
		{"aws_secret_access_key=" + secret, "aws_secret_access_key=[redacted]"},
		{`"SecretAccessKey": "` + secret + `"`, `"SecretAccessKey": "[redacted]"`},
		{"Authorization: Basic dXNlcjpzZWNyZXQxMjM= rejected", "Authorization: [redacted] rejected"},
		{"code bad_key_" + fakeKey("gsk_", 52, alnum, ""), "code bad_key_[redacted]"},
		{"param user." + fakeKey("xai-", 80, alnum, ""), "param user.[redacted]"},
	}
	for _, c := range labelled {
		if got := RedactShapes(c.in); got != c.want {
			t.Errorf("RedactShapes(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRedactShapesKeepsWords checks that what providers say in ordinary
// errors is not mangled: model names, parameters, ids with prefixes, UUIDs,
// long words and identifiers.
func TestRedactShapesKeepsWords(t *testing.T) {
	for _, s := range []string{
		"The model `pplx-70b-chat` does not exist",
		"model gpt-4o-mini-2024-07-18 is not available; try claude-3-5-sonnet-20241022",
		"anthropic.claude-3-5-sonnet-20241022-v2:0 is not supported in us-east-1",
		"messages.0.content.1.image_url.url: invalid base64 prefix",
		"request req_011CSHoEeqs5C35K2UUqR7Fy failed (id chatcmpl-C1fPq7nYtD0xWbA3kZr8sLm2VuE4h)",
		"deployment 3fa85f64-5717-4562-b3fc-2c963f66afa6 not found",
		"ValidationExceptionBecauseTheInputIsFarTooLongForTheModel",
		"antidisestablishmentarianism and pneumonoultramicroscopicsilicovolcanoconiosis",
		"Basic authentication is not supported; use a Bearer",
		"the hf_transfer option and the sk-learn package",
		"risk-assessment of the task-planner at 0.9007",
		"**bold** and *** rules",
		"max_tokens: 9223372036854775807 is too large",
	} {
		if got := RedactShapes(s); got != s {
			t.Errorf("RedactShapes(%q) = %q, want it unchanged", s, got)
		}
	}
}
