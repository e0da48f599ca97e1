package docs

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/store/storetest"
)

func newHTTP(t *testing.T) (*Jobs, http.Handler) {
	t.Helper()
	db := storetest.OpenSQL(t, "sqlite://"+filepath.Join(t.TempDir(), "svc.db"))
	j := NewJobs(db, Options{RunnerID: "h"})
	return j, Handler(j, 0)
}

// multipartBody is a body with the named file fields.
func multipartBody(t testing.TB, field, filename string, data []byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mw.WriteField("note", "hello")
	w, err := mw.CreateFormFile(field, filename)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

func serve(h http.Handler, method, target, contentType string, body io.Reader) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, body)
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	if body == nil {
		r.ContentLength = 0
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// apiError is the OpenAI-shaped error body.
type apiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func decode[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("body %q: %v", w.Body.String(), err)
	}
	return v
}

func TestHTTPFlow(t *testing.T) {
	j, h := newHTTP(t)
	ct, body := multipartBody(t, "file", "policy.docx", makeDOCX(t, []docxPara{
		{style: "Heading1", text: "Customer Data"},
		{text: "Employees must not enter social security numbers into AI tools."},
	}, "", ""))
	w := serve(h, "POST", "/api/policies/generate-from-document", ct, bytes.NewReader(body))
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST = %d %s, want 202", w.Code, w.Body)
	}
	accepted := decode[struct {
		Success bool   `json:"success"`
		JobID   string `json:"job_id"`
		Message string `json:"message"`
	}](t, w)
	if !accepted.Success || !strings.HasPrefix(accepted.JobID, "job_") || accepted.Message == "" {
		t.Fatalf("POST body = %+v", accepted)
	}

	progress := func() Job {
		w := serve(h, "GET", "/api/documents/job/"+accepted.JobID+"/progress", "", nil)
		if w.Code != http.StatusOK {
			t.Fatalf("progress = %d %s", w.Code, w.Body)
		}
		p := decode[struct {
			Success bool `json:"success"`
			Job     Job  `json:"job"`
		}](t, w)
		if !p.Success {
			t.Errorf("progress success = false")
		}
		return p.Job
	}
	if got := progress(); got.Status != StatusPending || got.Filename != "policy.docx" || got.Format != FormatDOCX {
		t.Errorf("progress = %+v, want pending policy.docx", got)
	}
	w = serve(h, "GET", "/api/documents/job/"+accepted.JobID+"/results", "", nil)
	if e := decode[apiError](t, w); w.Code != http.StatusConflict || e.Error.Code == nil || *e.Error.Code != "job_not_completed" {
		t.Errorf("results before completion = %d %s, want 409 job_not_completed", w.Code, w.Body)
	}

	runOnce(t, j, true)
	if got := progress(); got.Status != StatusCompleted || got.ProgressPct != 100 || got.TotalPolicies != 1 {
		t.Errorf("progress = %+v, want completed, 100, 1 policy", got)
	}
	w = serve(h, "GET", "/api/documents/job/"+accepted.JobID+"/results", "", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("results = %d %s", w.Code, w.Body)
	}
	var res map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	sugs, _ := res["suggested_policies"].([]any)
	if res["job_id"] != accepted.JobID || res["filename"] != "policy.docx" || res["total_policies"] != 1.0 || len(sugs) != 1 {
		t.Fatalf("results = %s", w.Body)
	}
	first, _ := sugs[0].(map[string]any)
	for _, k := range []string{"id", "name", "type", "content", "priority", "regulatory_framework", "confidence"} {
		if _, ok := first[k]; !ok {
			t.Errorf("suggested policy lacks %q: %v", k, first)
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// zeros is an endless text of spaces.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

func TestHTTPTooLarge(t *testing.T) {
	_, h := newHTTP(t)
	const size = 60 << 20
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	mw.CreateFormFile("file", "big.txt")
	closing := "\r\n--" + mw.Boundary() + "--\r\n"
	for _, known := range []bool{true, false} {
		name := map[bool]string{true: "content-length", false: "chunked"}[known]
		t.Run(name, func(t *testing.T) {
			cr := &countingReader{r: io.MultiReader(bytes.NewReader(head.Bytes()), io.LimitReader(zeros{}, size), strings.NewReader(closing))}
			r := httptest.NewRequest("POST", "/api/policies/generate-from-document", cr)
			r.Header.Set("Content-Type", mw.FormDataContentType())
			r.ContentLength = -1
			if known {
				r.ContentLength = int64(head.Len()) + size + int64(len(closing))
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("60 MB upload = %d %s, want 413", w.Code, w.Body)
			}
			if e := decode[apiError](t, w); e.Error.Message == "" || e.Error.Type == "" {
				t.Errorf("body %s, want an OpenAI-shaped error", w.Body)
			}
			// Refused from its length, or after at most the limit.
			limit := int64(MaxDocumentBytes + multipartOverhead + 64<<10)
			if known && cr.n != 0 || cr.n > limit {
				t.Errorf("read %d bytes of the body, want %s", cr.n, map[bool]string{true: "none", false: "at most the limit"}[known])
			}
		})
	}
}

func TestHTTPBadInput(t *testing.T) {
	_, h := newHTTP(t)
	pngCT, png := multipartBody(t, "file", "policy.pdf", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00"))
	wrongCT, wrongField := multipartBody(t, "document", "p.txt", []byte("text"))
	emptyCT, empty := multipartBody(t, "file", "p.txt", nil)
	tests := []struct {
		name, method, target, ct string
		body                     []byte
		status                   int
	}{
		{"not a document", "POST", "/api/policies/generate-from-document", pngCT, png, http.StatusUnsupportedMediaType},
		{"not multipart", "POST", "/api/policies/generate-from-document", "application/json", []byte(`{}`), http.StatusBadRequest},
		{"malformed multipart", "POST", "/api/policies/generate-from-document", "multipart/form-data; boundary=xyz", []byte("--xyz\r\nbroken"), http.StatusBadRequest},
		{"no file field", "POST", "/api/policies/generate-from-document", wrongCT, wrongField, http.StatusBadRequest},
		{"empty file", "POST", "/api/policies/generate-from-document", emptyCT, empty, http.StatusBadRequest},
		{"unknown job progress", "GET", "/api/documents/job/job_nope/progress", "", nil, http.StatusNotFound},
		{"unknown job results", "GET", "/api/documents/job/job_nope/results", "", nil, http.StatusNotFound},
		{"overlong job id", "GET", "/api/documents/job/" + strings.Repeat("x", 100) + "/progress", "", nil, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != nil {
				body = bytes.NewReader(tt.body)
			}
			w := serve(h, tt.method, tt.target, tt.ct, body)
			if w.Code != tt.status {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.target, w.Code, w.Body, tt.status)
			}
			if e := decode[apiError](t, w); e.Error.Message == "" || e.Error.Type == "" {
				t.Errorf("body %s, want an OpenAI-shaped error", w.Body)
			}
		})
	}
}
