package secrets

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// Fake keys: random strings of the right shape from a fixed seed. None is a
// real credential.
const (
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
	alnum  = upper + lower + digits
	hexLow = "0123456789abcdef"
	b64url = alnum + "-_"
	b32    = upper + "234567"
)

type faker struct{ r *rand.Rand }

func newFaker(seed uint64) *faker {
	return &faker{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (f *faker) str(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[f.r.IntN(len(alphabet))]
	}
	return string(b)
}

func (f *faker) num(n int) string { return f.str(digits, n) }

func jwtOf(f *faker, header, payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(payload)) + "." + f.str(b64url, 43)
}

func pemOf(f *faker, label string, lines int) string {
	var b strings.Builder
	b.WriteString("-----BEGIN " + label + "-----\n")
	for range lines {
		b.WriteString(f.str(alnum+"+/", 64) + "\n")
	}
	b.WriteString(f.str(alnum+"+/", 20) + "==\n")
	b.WriteString("-----END " + label + "-----")
	return b.String()
}

type positive struct {
	name   string
	text   string // holds secret once
	secret string // the span wanted
	typ    detect.Type
}

func positives() []positive {
	f := newFaker(13)
	awsSecret := f.str(alnum, 30) + "/" + f.str(alnum, 4) + "+" + f.str(alnum, 4)
	awsID := "AKIA" + f.str(b32, 16)
	rsa := pemOf(f, "RSA PRIVATE KEY", 12)
	ossh := pemOf(f, "OPENSSH PRIVATE KEY", 6)
	truncated := "-----BEGIN PRIVATE KEY-----\n" + f.str(alnum+"+/", 64) + "\n" + f.str(alnum+"+/", 64)
	jwt := jwtOf(f, `{"alg":"HS256","typ":"JWT"}`, `{"sub":"`+f.num(8)+`","name":"Jo","iat":1716239022}`)
	pgPass := f.str(alnum, 14)
	var ps []positive
	add := func(name, format, secret string, typ detect.Type) {
		ps = append(ps, positive{name, strings.Replace(format, "%s", secret, 1), secret, typ})
	}
	add("openai project key with marker", "export OPENAI_API_KEY=%s", "sk-proj-"+f.str(b64url, 74)+"T3BlbkFJ"+f.str(b64url, 74), detect.APIKey)
	add("openai project key without marker", "My OpenAI key is %s.", "sk-proj-"+f.str(b64url, 100), detect.APIKey)
	add("openai legacy key", "client = OpenAI(api_key=\"%s\")", "sk-"+f.str(alnum, 20)+"T3BlbkFJ"+f.str(alnum, 20), detect.APIKey)
	add("openai-compatible 48", "use %s for the deepseek endpoint", "sk-"+f.str(alnum, 48), detect.APIKey)
	add("openrouter", "OPENROUTER: %s", "sk-or-v1-"+f.str(hexLow, 64), detect.APIKey)
	add("anthropic api03", "ANTHROPIC_API_KEY='%s'", "sk-ant-api03-"+f.str(b64url, 93)+"AA", detect.APIKey)
	add("anthropic other shape", "here: %s, thanks", "sk-ant-oat01-"+f.str(b64url, 80), detect.APIKey)
	add("google api key", "the maps key AIza... no wait, it is %s", "AIza"+f.str(b64url, 35), detect.APIKey)
	add("github classic pat", "git clone https://github.com/acme/app (token %s)", "ghp_"+f.str(alnum, 36), detect.APIKey)
	add("github fine-grained pat", "GH_TOKEN=%s", "github_pat_"+f.str(alnum, 22)+"_"+f.str(alnum, 59), detect.APIKey)
	add("slack bot token", "slack: %s", "xoxb-"+f.num(11)+"-"+f.num(12)+"-"+f.str(alnum, 24), detect.APIKey)
	add("slack user token", "%s is the user token", "xoxp-"+f.num(11)+"-"+f.num(11)+"-"+f.num(12)+"-"+f.str(hexLow, 32), detect.APIKey)
	add("stripe live key", "stripe.api_key = \"%s\"", "sk_live_"+f.str(alnum, 24), detect.APIKey)
	add("stripe restricted key", "Restricted key: %s", "rk_live_"+f.str(alnum, 30), detect.APIKey)
	add("aws access key id", "aws_access_key_id = %s", awsID, detect.AWSAccessKey)
	add("aws access key id with 0189", "key id %s in the logs", "AKIA"+f.str(upper+"0189", 16), detect.AWSAccessKey)
	add("aws secret by name", "aws_secret_access_key = %s", awsSecret, detect.AWSSecretKey)
	add("aws secret in prose", "The AWS secret key is %s, rotate it.", f.str(alnum, 38)+"/"+f.str(digits, 1), detect.AWSSecretKey)
	add("aws secret json", `{"SecretAccessKey": "%s"}`, f.str(alnum+"/+", 40), detect.AWSSecretKey)
	add("twilio api key", "TWILIO sid %s", "SK"+f.str(hexLow, 32), detect.APIKey)
	add("sendgrid", "SENDGRID=%s", "SG."+f.str(b64url, 22)+"."+f.str(b64url, 43), detect.APIKey)
	add("huggingface", "HF token: %s", "hf_"+f.str(upper+lower, 34), detect.APIKey)
	add("gitlab pat", "glab auth login --token %s", "glpat-"+f.str(b64url, 20), detect.APIKey)
	add("npm token", "//registry.npmjs.org/:_authToken=%s", "npm_"+f.str(alnum, 36), detect.APIKey)
	add("groq", "GROQ_API_KEY=%s", "gsk_"+f.str(alnum, 52), detect.APIKey)
	add("rsa private key", "key:\n%s\nthanks", rsa, detect.PrivateKey)
	add("openssh private key", "%s", ossh, detect.PrivateKey)
	add("truncated private key", "I pasted this: %s", truncated, detect.PrivateKey)
	add("jwt", "Authorization: Bearer %s", jwt, detect.JWT)
	add("postgres url", "DATABASE_URL=%s", "postgres://app:"+pgPass+"@db.internal:5432/orders", detect.DatabaseURL)
	add("mysql url", "connect to %s.", "mysql://root:"+f.str(alnum, 12)+"@10.0.0.5:3306/shop", detect.DatabaseURL)
	add("mongodb srv url", "uri: '%s'", "mongodb+srv://svc:"+f.str(alnum, 16)+"@cluster0.ab1cd.mongodb.net/prod?retryWrites=true", detect.DatabaseURL)
	add("redis url password only", "REDIS_URL=%s", "redis://:"+f.str(alnum, 20)+"@cache:6379/0", detect.DatabaseURL)
	add("amqp url", "broker %s", "amqp://guest:"+f.str(alnum, 10)+"@rabbit:5672/vhost", detect.DatabaseURL)
	add("weak url password", "sql.Open(\"postgres\", \"%s\")", "postgres://svc_reader:changeme123@analytics.contoso.net:5432/crm", detect.DatabaseURL)
	add("jdbc url", "url=%s", "jdbc:mysql://app:"+f.str(alnum, 12)+"@db:3306/app", detect.DatabaseURL)
	add("generic api key", "weather_api_key = '%s'", f.str(alnum, 32), detect.APIKey)
	add("generic secret", "SESSION_SECRET=%s", f.str(alnum, 40), detect.Secret)
	add("token in prose", "my access token is %s please keep it", f.str(alnum, 24), detect.Secret)
	add("password assignment", "password: %s", "Tr0ub4dor&3x", detect.Secret)
	add("password in connection string", "Server=db;User Id=sa;Password=%s;", "Zt8#kq2VmP4x", detect.Secret)
	add("aws secret in German", "anbei der Zugangsschlüssel "+"AKIA"+f.str(b32, 16)+" und der geheime Schlüssel %s.", f.str(alnum, 36)+"/"+f.str(alnum, 3), detect.AWSSecretKey)
	add("aws secret in Spanish", "Mi clave secreta de AWS es %s y no la compartas.", f.str(alnum, 39)+"+", detect.AWSSecretKey)
	add("aws secret in French", "Voici la clé d'accès secrète AWS : %s merci.", f.str(alnum, 38)+"9/", detect.AWSSecretKey)
	add("aws configure prompt", "AWS Secret Access Key [None]: %s", f.str(alnum, 38)+"7a", detect.AWSSecretKey)
	add("sts json", `{"AccessKeyId": "ASIA`+f.str(b32, 16)+`", "SecretAccessKey": "%s"}`, f.str(alnum+"/+", 40), detect.AWSSecretKey)
	add("aws secret in a log line", "2024-05-01 12:00:00 WARN aws s3 sync failed: secret=%s region=eu-west-1", f.str(alnum, 37)+"+/1", detect.AWSSecretKey)
	add("aws secret in a form", "IAM user: deploy-bot\nSecret: %s", f.str(alnum, 38)+"Z9", detect.AWSSecretKey)
	add("fine-grained pat other length", "GH_PAT=%s", "github_pat_"+f.str(alnum, 70), detect.APIKey)
	add("slack user token two groups", "slack %s", "xoxp-"+f.num(12)+"-"+f.num(12)+"-"+f.str(alnum, 24), detect.APIKey)
	add("sendgrid other lengths", "%s", "SG."+f.str(b64url, 20)+"."+f.str(b64url, 40), detect.APIKey)
	add("github oauth in curl", "$ curl -H 'Authorization: token %s' https://api.github.com/user", "gho_"+f.str(alnum, 36), detect.APIKey)
	add("api key in a log line", "2024-06-11 12:00:01 INFO user=42 api_key=%s status=200", f.str(alnum, 32), detect.APIKey)
	add("password in German", "Passwort: %s", "Xk9#"+f.str(alnum, 8), detect.Secret)
	add("slack webhook", "post to %s", "https://hooks.slack.com/services/T"+f.str(upper+digits, 8)+"/B"+f.str(upper+digits, 8)+"/"+f.str(alnum, 24), detect.APIKey)
	return ps
}

func TestDetectPositives(t *testing.T) {
	d := MustNew()
	for _, tt := range positives() {
		t.Run(tt.name, func(t *testing.T) {
			at := strings.Index(tt.text, tt.secret)
			got := detect.Resolve(d.Detect(tt.text, nil), len(tt.text))
			for _, f := range got {
				if f.Start == at && f.End == at+len(tt.secret) {
					if f.Type != tt.typ {
						t.Errorf("type of %q: got %s (%s), want %s", tt.secret, f.Type, f.Rule, tt.typ)
					}
					return
				}
			}
			t.Errorf("in %q: got %v, want %s at [%d,%d)", tt.text, describe(tt.text, got), tt.typ, at, at+len(tt.secret))
		})
	}
}

// TestRedactionRemovesSecrets checks the finding spans cover the secret:
// no secret survives redaction.
func TestRedactionRemovesSecrets(t *testing.T) {
	d := MustNew()
	for _, tt := range positives() {
		red := detect.Redact(tt.text, detect.Resolve(d.Detect(tt.text, nil), len(tt.text)))
		if strings.Contains(red, tt.secret) {
			t.Errorf("%s: redacted %q still holds the secret", tt.name, red)
		}
	}
}

func TestDetectClean(t *testing.T) {
	f := newFaker(7)
	tests := []struct{ name, text string }{
		// placeholders
		{"sk dots", "Set OPENAI_API_KEY to sk-... and restart."},
		{"sk xxxx", "api_key = \"sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\""},
		{"angle placeholder", "Authorization: Bearer <YOUR_API_KEY>"},
		{"key here", "OPENAI_API_KEY=YOUR_API_KEY_HERE"},
		{"your-key-here", "export ANTHROPIC_API_KEY=your-api-key-here"},
		{"x run", "token: xxxxxxxxxxxxxxxxxxxxxxxx"},
		{"stars", "password: ********"},
		{"env reference", "api_key = ${OPENAI_API_KEY}"},
		{"os.environ", `client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])`},
		{"process.env", "const token = process.env.GITHUB_TOKEN;"},
		{"aws example id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"},
		{"aws example secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		{"low entropy repeat", "secret_key = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
		{"sk-proj repeat", "sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
		{"sequence", "API_KEY=abcdefghijklmnopqrstuvwxyz0123456789"},
		{"url without password", "DATABASE_URL=postgres://app@db.internal:5432/orders"},
		{"url placeholder password", "postgres://user:password@localhost:5432/mydb"},
		{"url variable password", "postgres://app:${DB_PASSWORD}@db:5432/app"},
		{"redis without auth", "redis://127.0.0.1:6379/0"},
		{"url elided password", "--from-literal=DATABASE_URL='postgres://svc:\u2026@postgres.example:5432/svc'"},
		{"url change-me password", "DATABASE_URL: postgres://svc:CHANGE-ME@postgres.example:5432/svc"},
		{"private key placeholder", "-----BEGIN PRIVATE KEY-----\n<your private key here>\n-----END PRIVATE KEY-----"},
		{"private key elided", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA...\n-----END RSA PRIVATE KEY-----"},
		{"public key", "-----BEGIN PUBLIC KEY-----\n" + f.str(alnum, 64) + "\n-----END PUBLIC KEY-----"},
		{"password prose", "The password policy requires twelve characters; the password is never logged."},
		{"password word", "password: required"},
		{"jwt sample from jwt.io", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"},
		{"not a jwt", "eyJub3QiOiJhIGp3dCJ9.eyJzdWIiOiIxIn0." + f.str(b64url, 43)},
		// hard negatives
		{"uuid", "request id 550e8400-e29b-41d4-a716-446655440000 failed"},
		{"uuid after key word", "the idempotency key 7c9e6679-7425-40de-944b-e07fc1f90ae7 was reused"},
		{"git sha", "fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b on main"},
		{"sha256", "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"npm integrity", `"integrity": "sha512-` + f.str(alnum+"+/", 86) + `=="`},
		{"data uri", "<img src=\"data:image/png;base64," + f.str(alnum+"+/", 3000) + "\"> key"},
		{"version", "upgrade to v1.24.3-rc.2+build.20240611 before the token rotation"},
		{"scoped package", "npm i @acme/auth-token@2.3.1"},
		{"identifiers", "AUTH_TOKEN_EXPIRY_SECONDS=3600 and getAccessTokenFromEnvironment()"},
		{"snake identifier", "secret_name = aws_secretsmanager_secret_version"},
		{"monkey keyboard", "The monkey typed on the keyboard: ZX81-SPECTRUM-COMMODORE-64"},
		{"url with token word", "see https://example.com/docs/api/tokens/create?page=2 for details"},
		{"file path", "the key is in /etc/ssl/private/server-2024.key"},
		{"prose", "They say the key to success is patience; the token economy collapsed in 2022."},
		{"hex color and ids", "color #a3f2c9, order 1234-5678-9012, ISBN 978-3-16-148410-0"},
		{"ipv6", "auth server at 2001:0db8:85a3:0000:0000:8a2e:0370:7334"},
		{"base64 in prose", "the string SGVsbG8gV29ybGQ= decodes to Hello World"},
		{"page token", `"nextPageToken": "` + f.str(alnum, 40) + `"`},
		{"primary key", "primary key 9a8b7c6d5e4f3a2b1c0d9e8f"},
		{"csrf token", "csrf token: " + f.str(alnum, 32)},
		{"typed sequence", "token: sk-abc123def456ghi789jkl012mno345pqr678"},
		{"masked provider keys", "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX AKIA0000000000000000 [REDACTED] sk-ant-api03-..."},
		{"digests", "image: nginx@sha256:" + f.str(hexLow, 64) + " and md5 " + f.str(hexLow, 32)},
		{"llm tokens", "prompt tokens: 1834, completion tokens: 412, total tokens: 2246"},
	}
	d := MustNew()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := d.Detect(tt.text, nil); len(got) != 0 {
				t.Errorf("in %q: got %v, want none", tt.text, describe(tt.text, got))
			}
		})
	}
}

func TestStats(t *testing.T) {
	st := MustNew().Stats()
	if st.GitleaksRules != 222 {
		t.Errorf("gitleaks rules: got %d, want 222 (gitleaks.toml changed?)", st.GitleaksRules)
	}
	regexpSkips := 0
	for _, s := range st.Skipped {
		if s.Reason == ReasonRegexp {
			regexpSkips++
		}
	}
	if regexpSkips > 3 {
		t.Errorf("rules Go's regexp cannot compile: got %d, want at most 3", regexpSkips)
	}
	if want := st.GitleaksRules + st.OwnRules - len(st.Skipped) - len(st.Replaced); st.Running != want {
		t.Errorf("running: got %d, want %d", st.Running, want)
	}
	if st.Prefix+st.Assign+st.Required+st.Full != st.Patterns || st.Patterns < st.Running {
		t.Errorf("patterns: %d prefix + %d assign + %d full, want %d (>= %d rules)", st.Prefix, st.Assign, st.Full, st.Patterns, st.Running)
	}
	if st.Full > 15 {
		t.Errorf("rules run over the whole text: got %d, want at most 15", st.Full)
	}
	t.Logf("%d gitleaks + %d own rules, %d running as %d patterns (%d prefix, %d assign, %d required, %d full), %d skipped (%d regexp), %d replaced, %d keywords, built in %v",
		st.GitleaksRules, st.OwnRules, st.Running, st.Patterns, st.Prefix, st.Assign, st.Required, st.Full, len(st.Skipped), regexpSkips, len(st.Replaced), st.Keywords, st.Build)
}

func TestGenericType(t *testing.T) {
	tests := []struct {
		name string
		want detect.Type
	}{
		{"openai_api_key=", detect.APIKey},
		{"stripe_key:", detect.APIKey},
		{"db_password =", detect.Secret},
		{"client_secret_key=", detect.Secret},
		{"github_token=", detect.Secret},
	}
	for _, tt := range tests {
		if got := genericType([]byte(tt.name)); got != tt.want {
			t.Errorf("genericType(%q): got %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestFindingsValid(t *testing.T) {
	d := MustNew()
	for _, tt := range positives() {
		for _, fd := range d.Detect(tt.text, nil) {
			if fd.Start < 0 || fd.End > len(tt.text) || fd.Start >= fd.End || fd.Score <= 0 || fd.Score > 1 || fd.Rule == "" {
				t.Errorf("%s: invalid finding %+v", tt.name, fd)
			}
			if fd.Type.Category() != detect.CategorySecret {
				t.Errorf("%s: type %s is not a secret type", tt.name, fd.Type)
			}
		}
	}
}

func describe(text string, fs []detect.Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, string(f.Type)+":"+f.Rule+":"+text[f.Start:f.End])
	}
	return out
}

// TestContexts puts provider keys into frames the other tests do not use:
// JSON, logs, shell, e-mail, tables, markdown, URLs, German, Spanish and
// French sentences.
func TestContexts(t *testing.T) {
	f := newFaker(21)
	keys := []struct {
		name string
		key  string
		typ  detect.Type
	}{
		{"openai legacy", "sk-" + f.str(alnum, 48), detect.APIKey},
		{"openai project", "sk-proj-" + f.str(b64url, 120), detect.APIKey},
		{"anthropic", "sk-ant-api03-" + f.str(b64url, 93) + "AA", detect.APIKey},
		{"github pat", "ghp_" + f.str(alnum, 36), detect.APIKey},
		{"github fine-grained", "github_pat_" + f.str(alnum, 22) + "_" + f.str(alnum, 59), detect.APIKey},
		{"github oauth", "gho_" + f.str(alnum, 36), detect.APIKey},
		{"slack bot", "xoxb-" + f.num(12) + "-" + f.num(13) + "-" + f.str(alnum, 24), detect.APIKey},
		{"slack user", "xoxp-" + f.num(12) + "-" + f.num(12) + "-" + f.num(13) + "-" + f.str(hexLow, 32), detect.APIKey},
		{"stripe live", "sk_live_" + f.str(alnum, 99), detect.APIKey},
		{"stripe restricted", "rk_live_" + f.str(alnum, 24), detect.APIKey},
		{"google", "AIza" + f.str(b64url, 35), detect.APIKey},
		{"gitlab", "glpat-" + f.str(b64url, 20), detect.APIKey},
		{"hugging face", "hf_" + f.str(alnum, 34), detect.APIKey},
		{"sendgrid", "SG." + f.str(b64url, 22) + "." + f.str(b64url, 43), detect.APIKey},
		{"npm", "npm_" + f.str(alnum, 36), detect.APIKey},
		{"aws temporary id", "ASIA" + f.str(b32, 16), detect.AWSAccessKey},
		{"aws id", "AKIA" + f.str(b32, 16), detect.AWSAccessKey},
	}
	frames := []string{
		`{"api_key": "%s", "region": "eu-west-1"}`,
		`2024-05-01T10:00:00.123Z level=warn msg="auth failed" key=%s user=42`,
		"$ export TOKEN=%s\n$ ./deploy.sh",
		"Dear team,\n\nplease use the following credential: %s\n\nKind regards,\nOps",
		"| service | credential |\n|---|---|\n| billing | %s |",
		"Use **%s** for now.",
		"https://api.example.com/v1/items?key=%s&page=2",
		"curl -H \"Authorization: Bearer %s\" https://api.example.com",
		"Mein Schlüssel lautet %s.",
		"Mi clave es %s, gracias.",
		"Voici ma clé : %s !",
		"(see %s)",
	}
	d := MustNew()
	for _, k := range keys {
		for i, fr := range frames {
			text := strings.Replace(fr, "%s", k.key, 1)
			at := strings.Index(text, k.key)
			got := detect.Resolve(d.Detect(text, nil), len(text))
			ok := false
			for _, x := range got {
				if x.Start == at && x.End == at+len(k.key) && x.Type == k.typ {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s in frame %d: got %v, want %s %q", k.name, i, describe(text, got), k.typ, k.key)
			}
		}
	}
}

func TestSplitTop(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{`abc`, []string{`abc`}},
		{`(?i)a(b|c)|d[|]e|f\|g`, []string{`(?i)a(b|c)`, `(?i)d[|]e`, `(?i)f\|g`}},
		{`[]|]x|y`, []string{`[]|]x`, `y`}},
		{`(?i:a|b)c`, []string{`(?i:a|b)c`}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, splitTop(tt.src)); d != "" {
			t.Errorf("splitTop(%q) (-want +got):\n%s", tt.src, d)
		}
	}
}

// TestConcurrent runs Detect from several goroutines (run with -race): the
// shared rules and the pooled scratch must not leak between calls.
func TestConcurrent(t *testing.T) {
	d := MustNew()
	ps := positives()
	want := make([]int, len(ps))
	for i, p := range ps {
		want[i] = len(d.Detect(p.text, nil))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(ps))
	for g := range 4 {
		wg.Go(func() {
			for k := range 3 * len(ps) {
				i := (k + g) % len(ps)
				if got := len(d.Detect(ps[i].text, nil)); got != want[i] {
					errs <- ps[i].name
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for name := range errs {
		t.Errorf("%s: a concurrent call found a different number of findings", name)
	}
}
