package cohere_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
)

// TestDecodeRerankRequest covers llm.DecodeRerankRequest, which the rerank
// golden cases rely on: documents as strings or {"text"} objects, kept as
// given, and the validation errors.
func TestDecodeRerankRequest(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantDocs  string // documents re-marshalled
		wantParam string
	}{
		{name: "strings and objects", body: `{"model":"m","query":"q","documents":["a",{"text":"b","id":7},{"id":"x","text":"c"}]}`,
			wantDocs: `[{"text":"a"},{"text":"b","id":7},{"id":"x","text":"c"}]`},
		{name: "no model", body: `{"query":"q","documents":["a"]}`, wantParam: "model"},
		{name: "blank query", body: `{"model":"m","query":" ","documents":["a"]}`, wantParam: "query"},
		{name: "no documents", body: `{"model":"m","query":"q","documents":[]}`, wantParam: "documents"},
		{name: "too many documents", body: `{"model":"m","query":"q","documents":[` + strings.Repeat(`"d",`, llm.MaxRerankDocuments) + `"d"]}`, wantParam: "documents"},
		{name: "object without text", body: `{"model":"m","query":"q","documents":[{"title":"t"}]}`, wantParam: "documents[0]"},
		{name: "number document", body: `{"model":"m","query":"q","documents":[1]}`, wantParam: "documents[0]"},
		{name: "top_n zero", body: `{"model":"m","query":"q","documents":["a"],"top_n":0}`, wantParam: "top_n"},
		{name: "max_tokens_per_doc zero", body: `{"model":"m","query":"q","documents":["a"],"max_tokens_per_doc":0}`, wantParam: "max_tokens_per_doc"},
		{name: "top_n not a number", body: `{"model":"m","query":"q","documents":["a"],"top_n":"2"}`, wantParam: "top_n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := llm.DecodeRerankRequest([]byte(tc.body))
			if tc.wantParam != "" {
				e := apierr.From(err)
				if err == nil || e.Kind != apierr.InvalidRequest || e.Param != tc.wantParam {
					t.Fatalf("got %v (param %q), want an InvalidRequest about %s", err, e.Param, tc.wantParam)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(r.Documents)
			if string(got) != tc.wantDocs {
				t.Errorf("documents: got %s, want %s", got, tc.wantDocs)
			}
		})
	}
}
