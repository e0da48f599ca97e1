package cred_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/upstream/cred"
)

// The credentials of AWS's Signature Version 4 test suite.
var suiteCreds = cred.SigV4Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}

func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }

// TestSigV4Vanilla signs the test suite's get-vanilla request and compares
// the Authorization header with the one AWS documents.
func TestSigV4Vanilla(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "https://example.amazonaws.com/", nil)
	s := cred.NewSigV4(suiteCreds, "us-east-1", "service")
	s.Now = fixed(time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC))
	if err := s.Sign(req, "ignored"); err != nil {
		t.Fatal(err)
	}
	const want = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
	if got := req.Header.Get("Authorization"); got != want {
		t.Errorf("Authorization:\ngot  %s\nwant %s", got, want)
	}
	if got := req.Header.Get("X-Amz-Date"); got != "20150830T123600Z" {
		t.Errorf("X-Amz-Date: got %q, want 20150830T123600Z", got)
	}
}

// TestSigV4Bedrock signs a Bedrock Converse request (escaped model id in the
// path, JSON body, session token) and checks it against an independent
// computation of Signature Version 4 as AWS documents it, that the header
// has the documented form, and that the body is left unread.
func TestSigV4Bedrock(t *testing.T) {
	body := []byte(`{"messages":[{"role":"user","content":[{"text":"Hello!"}]}]}`)
	req, _ := http.NewRequest(http.MethodPost, "https://bedrock-runtime.us-west-2.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	creds := suiteCreds
	creds.SessionToken = "IQoJb3JpZ2luX2VjEXAMPLETOKEN"
	at := time.Date(2026, 11, 22, 5, 40, 7, 0, time.UTC)
	s := cred.NewSigV4(creds, "us-west-2", "bedrock")
	s.Now = fixed(at)
	if err := s.Sign(req, "some-key"); err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("X-Amz-Security-Token"); got != creds.SessionToken {
		t.Errorf("X-Amz-Security-Token: got %q, want the session token", got)
	}
	auth := req.Header.Get("Authorization")
	re := regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261122/us-west-2/bedrock/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$`)
	m := re.FindStringSubmatch(auth)
	if m == nil {
		t.Fatalf("Authorization %q does not have the documented form", auth)
	}
	want := referenceSignature(t, req, body, strings.Split(m[1], ";"), creds.SecretAccessKey, at, "us-west-2", "bedrock")
	if m[2] != want {
		t.Errorf("signature: got %s, want %s (independent computation)", m[2], want)
	}
	for _, h := range []string{"host", "x-amz-date", "x-amz-security-token", "content-type"} {
		if !strings.Contains(";"+m[1]+";", ";"+h+";") {
			t.Errorf("SignedHeaders %s: want %s signed", m[1], h)
		}
	}
	got, err := io.ReadAll(req.Body)
	if err != nil || !bytes.Equal(got, body) {
		t.Errorf("body after signing: got %q, %v; want it unread", got, err)
	}

	// Signing again (a retry) replaces the headers rather than adding to them.
	s.Now = fixed(at.Add(time.Minute))
	if err := s.Sign(req, ""); err != nil {
		t.Fatal(err)
	}
	if n := len(req.Header.Values("Authorization")); n != 1 || req.Header.Get("X-Amz-Date") != "20261122T054107Z" {
		t.Errorf("after re-signing: %d Authorization headers, X-Amz-Date %q", n, req.Header.Get("X-Amz-Date"))
	}
}

// referenceSignature computes SigV4 from AWS's documented steps: canonical
// request, string to sign, derived key, HMAC.
func referenceSignature(t *testing.T, req *http.Request, body []byte, signed []string, secret string, at time.Time, region, service string) string {
	t.Helper()
	sum := sha256.Sum256(body)
	var canon strings.Builder
	canon.WriteString(req.Method + "\n")
	// Non-S3 services encode the (already escaped) path once more.
	canon.WriteString(strings.ReplaceAll(req.URL.EscapedPath(), "%", "%25") + "\n")
	canon.WriteString(req.URL.RawQuery + "\n")
	sort.Strings(signed)
	for _, h := range signed {
		v := req.Header.Get(h)
		if h == "host" {
			v = req.URL.Host
		}
		if h == "content-length" {
			v = fmt.Sprint(req.ContentLength)
		}
		canon.WriteString(h + ":" + strings.TrimSpace(v) + "\n")
	}
	canon.WriteString("\n" + strings.Join(signed, ";") + "\n" + hex.EncodeToString(sum[:]))
	cr := sha256.Sum256([]byte(canon.String()))
	day := at.Format("20060102")
	sts := "AWS4-HMAC-SHA256\n" + at.Format("20060102T150405Z") + "\n" + day + "/" + region + "/" + service + "/aws4_request\n" + hex.EncodeToString(cr[:])
	mac := func(key []byte, s string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(s))
		return h.Sum(nil)
	}
	k := mac(mac(mac(mac([]byte("AWS4"+secret), day), region), service), "aws4_request")
	return hex.EncodeToString(mac(k, sts))
}

// TestSigV4NoGetBody checks that a body that cannot be re-read is refused,
// and that no error or String shows the secret.
func TestSigV4NoGetBody(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse", nil)
	req.Body = io.NopCloser(strings.NewReader("{}"))
	s := cred.NewSigV4(suiteCreds, "us-east-1", "bedrock")
	err := s.Sign(req, "")
	if err == nil {
		t.Fatal("Sign of a request without GetBody: got nil, want an error")
	}
	if req.Header.Get("Authorization") != "" {
		t.Error("Authorization set despite the error")
	}
	for name, text := range map[string]string{
		"error": err.Error(), "String": s.String(), "%v": fmt.Sprintf("%v", s), "%+v": fmt.Sprintf("%+v", s),
		"%#v": fmt.Sprintf("%#v", s), "creds %+v": fmt.Sprintf("%+v", suiteCreds), "creds %#v": fmt.Sprintf("%#v", suiteCreds),
	} {
		if strings.Contains(text, suiteCreds.SecretAccessKey) {
			t.Errorf("%s shows the secret: %s", name, text)
		}
	}
}

// TestSigV4EmptyBody signs a request without a body with the empty hash.
func TestSigV4EmptyBody(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "https://bedrock.us-east-1.amazonaws.com/foundation-models", nil)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := cred.NewSigV4(suiteCreds, "us-east-1", "bedrock")
	s.Now = fixed(at)
	if err := s.Sign(req, ""); err != nil {
		t.Fatal(err)
	}
	auth := req.Header.Get("Authorization")
	i := strings.Index(auth, "SignedHeaders=")
	j := strings.Index(auth, ", Signature=")
	if i < 0 || j < 0 {
		t.Fatalf("Authorization %q", auth)
	}
	want := referenceSignature(t, req, nil, strings.Split(auth[i+len("SignedHeaders="):j], ";"), suiteCreds.SecretAccessKey, at, "us-east-1", "bedrock")
	if got := auth[j+len(", Signature="):]; got != want {
		t.Errorf("signature: got %s, want %s", got, want)
	}
}
