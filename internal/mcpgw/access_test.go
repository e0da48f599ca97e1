package mcpgw

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestPermits(t *testing.T) {
	var s Server
	err := json.Unmarshal([]byte(`{"id":"fs","allowed_tools":["read","list"],"disallowed_tools":["delete"],
		"allowed_params":{"read":{"path":"/srv/.*","encoding":""},"list":["dir"]}}`), &s)
	if err != nil {
		t.Fatal(err)
	}
	s.Normalize()
	s.BaseURL = "https://fs.example.com/mcp"
	if err := s.Validate(ValidateOptions{}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool    string
		args    string
		granted bool
		param   string // "" and ok=true: permitted
		ok      bool
	}{
		{"read", `{"path":"/srv/a.txt"}`, false, "", true},
		{"read", `{"path":"/etc/passwd"}`, false, "path", false},
		{"read", `{"path":"/srv/a","encoding":"utf8"}`, false, "", true},
		{"read", `{"path":"/srv/a","mode":"x"}`, false, "mode", false},
		{"read", `{"path":{"$ne":1}}`, false, "path", false},
		{"list", `{"dir":{"any":"thing"}}`, false, "", true},
		{"write", `{}`, false, "", false},
		{"write", `{"x":1}`, true, "", true},
		{"delete", `{}`, true, "", false},
	}
	for _, c := range cases {
		args, err := DecodeArguments([]byte(c.args))
		if err != nil {
			t.Fatal(err)
		}
		err = s.Permits(c.tool, args.Params, c.granted)
		if (err == nil) != c.ok {
			t.Errorf("Permits(%s, %s, granted=%v) = %v, want ok=%v", c.tool, c.args, c.granted, err, c.ok)
			continue
		}
		var d *Denied
		if err != nil && (!errors.As(err, &d) || d.Param != c.param) {
			t.Errorf("Permits(%s, %s): got %#v, want a denial naming %q", c.tool, c.args, err, c.param)
		}
	}
	if s.Visible("delete", true) || !s.Visible("write", true) || s.Visible("write", false) {
		t.Error("Visible does not follow the lists and grants")
	}
}

func TestValidate(t *testing.T) {
	good := func() Server {
		return Server{ID: "gh", BaseURL: "https://mcp.example.com/mcp"}
	}
	cases := []struct {
		name  string
		edit  func(*Server)
		opts  ValidateOptions
		field string
	}{
		{"ok", func(*Server) {}, ValidateOptions{}, ""},
		{"no id", func(s *Server) { s.ID = "" }, ValidateOptions{}, "id"},
		{"double underscore", func(s *Server) { s.ID = "a__b" }, ValidateOptions{}, "id"},
		{"ftp", func(s *Server) { s.BaseURL = "ftp://x" }, ValidateOptions{}, "base_url"},
		{"userinfo", func(s *Server) { s.BaseURL = "https://u:p@x/" }, ValidateOptions{}, "base_url"},
		{"stdio off", func(s *Server) { s.Transport = "stdio"; s.Command = "npx" }, ValidateOptions{}, "transport"},
		{"stdio on", func(s *Server) { s.Transport = "stdio"; s.Command = "npx" }, ValidateOptions{StdioEnabled: true}, ""},
		{"header needs name", func(s *Server) { s.AuthType = "header" }, ValidateOptions{}, "auth_header_name"},
		{"bad auth", func(s *Server) { s.AuthType = "basic" }, ValidateOptions{}, "auth_type"},
		{"bad mode", func(s *Server) { s.GuardrailMode = "warn" }, ValidateOptions{}, "guardrail_mode"},
		{"cost", func(s *Server) { s.CostInfo.PerCallUSD = -1 }, ValidateOptions{}, "cost_info.per_call_usd"},
		{"pattern", func(s *Server) { s.AllowedParams = AllowedParams{"t": {"p": "("}} }, ValidateOptions{}, "allowed_params.t"},
		{"token newline", func(s *Server) { s.AuthType = "bearer"; s.AuthToken = "a\nb" }, ValidateOptions{}, "auth_token"},
	}
	for _, c := range cases {
		s := good()
		c.edit(&s)
		s.Normalize()
		err := s.Validate(c.opts)
		var v *ValidationError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (!errors.As(err, &v) || v.Field != c.field):
			t.Errorf("%s: got %v, want an error on %s", c.name, err, c.field)
		}
	}
}

func TestServerJSONHasNoCredential(t *testing.T) {
	s := Server{ID: "x", AuthType: AuthBearer, AuthToken: "tok-123-secret", Env: map[string]string{"API_KEY": "env-secret"}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"tok-123-secret", "env-secret"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("marshalled server carries %q: %s", secret, b)
		}
	}
	if !strings.Contains(string(b), `"has_auth_token":true`) || !strings.Contains(string(b), `"API_KEY"`) {
		t.Errorf("marshalled server lost has_auth_token or the env names: %s", b)
	}
}
