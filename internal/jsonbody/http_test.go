package jsonbody

import (
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
)

func TestRead(t *testing.T) {
	var v struct{ A int }
	r := httptest.NewRequest("POST", "/", strings.NewReader(`{"A":1}`))
	if err := Read(r, 7, &v, true); err != nil || v.A != 1 {
		t.Fatalf("Read = %v, %+v", err, v)
	}
	r = httptest.NewRequest("POST", "/", strings.NewReader(`{"A":12}`))
	if err := Read(r, 7, &v, true); apierr.KindOf(err) != apierr.TooLarge {
		t.Errorf("Read over the bound = %v, want 413", err)
	}
	r = httptest.NewRequest("POST", "/", strings.NewReader(`{"B":1}`))
	if err := Read(r, 100, &v, true); apierr.From(err).Param != "B" {
		t.Errorf("Read strict = %v, want 400 naming B", err)
	}
	if err := Read(httptest.NewRequest("POST", "/", strings.NewReader(`{"B":1}`)), 100, &v, false); err != nil {
		t.Errorf("Read lenient = %v", err)
	}
}

func TestWrite(t *testing.T) {
	w := httptest.NewRecorder()
	if err := Write(w, 201, map[string]int{"a": 1}); err != nil || w.Code != 201 || w.Body.String() != `{"a":1}` || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("Write = %v, %d %q %v", err, w.Code, w.Body.String(), w.Header())
	}
	w = httptest.NewRecorder()
	if err := Write(w, 200, math.NaN()); apierr.KindOf(err) != apierr.Internal || w.Body.Len() != 0 {
		t.Errorf("Write(NaN) = %v, wrote %q; want a 500 error and nothing written", err, w.Body.String())
	}
}
