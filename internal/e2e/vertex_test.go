package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
)

// TestVertexWithServiceAccount: the service account in VERTEX_API_KEY is
// exchanged for an access token once (JWT bearer grant at its token_uri),
// and Vertex AI's URL is built from project and location.
func TestVertexWithServiceAccount(t *testing.T) {
	var grants atomic.Int64
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || strings.Count(r.Form.Get("assertion"), ".") != 2 {
			http.Error(w, `{"error":"invalid_grant"}`, 400)
			return
		}
		grants.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"ya29.e2e-token","expires_in":3600,"token_type":"Bearer"}`))
	}))
	defer tokens.Close()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "acme", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "svc@acme.iam.gserviceaccount.com", "token_uri": tokens.URL,
	})
	fake := providertest.NewGemini(t, providertest.GemBearer("ya29.e2e-token"), providertest.GemReply("hello from vertex"))
	g := start(t, nil, config.Map{
		"VERTEX_API_KEY": string(sa), "VERTEX_PROJECT": "acme", "VERTEX_LOCATION": "europe-west4", "VERTEX_API_BASE": fake.URL(),
	})
	key, _ := g.newKey(nil)
	c := g.client(key)
	for i := 0; i < 3; i++ {
		res, err := c.Chat.Completions.New(context.Background(), chatParams("vertex/gemini-2.5-flash", "hi"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Choices[0].Message.Content != "hello from vertex" {
			t.Errorf("content %q", res.Choices[0].Message.Content)
		}
	}
	if n := grants.Load(); n != 1 {
		t.Errorf("token grants = %d, want 1 (cached)", n)
	}
	up := lastPost(t, fake.Requests())
	if up.Path != "/v1/projects/acme/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent" ||
		up.Header.Get("Authorization") != "Bearer ya29.e2e-token" {
		t.Errorf("upstream %s with %q", up.Path, up.Header.Get("Authorization"))
	}
	if strings.Contains(g.logs.String(), "PRIVATE KEY") {
		t.Error("the service account's key reached the log")
	}
}
