package audit_test

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// plainEntry is audit.Entry without its methods: encoding/json encodes it
// by reflection, the oracle AppendJSON must match byte for byte.
type plainEntry audit.Entry

func oracleJSON(t testing.TB, e *audit.Entry) string {
	t.Helper()
	js, err := json.Marshal((*plainEntry)(e))
	if err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return string(js)
}

// filled returns an entry with every field, nested ones too, set to a
// value that is not its zero value: a field added to Entry and not to
// AppendJSON makes TestAppendJSON fail.
func filled() *audit.Entry {
	var e audit.Entry
	n := 0
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		n++
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"path":"/srv/<a>"}`))
			return
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString("s" + strings.Repeat("x", n%5) + "<&>")
		case reflect.Int, reflect.Int64:
			v.SetInt(int64(n * 7))
		case reflect.Float64:
			v.SetFloat(float64(n) / 3)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
			fill(v.Index(0))
			fill(v.Index(1))
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					fill(v.Field(i))
				}
			}
		default:
			panic("filled: a field of kind " + v.Kind().String() + " to add")
		}
	}
	fill(reflect.ValueOf(&e).Elem())
	return &e
}

// TestAppendJSON checks that the hand-written encoder writes what
// encoding/json writes, byte for byte, for entries the proxy makes, an
// entry with every field set, the zero entry, and strings and floats at
// the edges of their encodings.
func TestAppendJSON(t *testing.T) {
	hit := benchExchange(3)
	hit.Cache = &pipeline.CacheHit{Query: "what is <b>svc</b> & why?", TokensSaved: 120, CostSaved: 0.0042}
	odd := benchExchange(5)
	odd.Principal.MaskedKey = "sk-\u2028\u2029é\x00\x1f\x7f<>&"
	odd.Chat.User = "Zoë \U0001F642 \\ \"q\" \b\f\n\r\t"
	odd.ConversationID = "bad \xff\xfe utf-8 \xe2\x80 cut"
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	everyByte := audit.FromExchange(benchExchange(6), 0)
	everyByte.Error, everyByte.ErrorType = all.String(), "x"

	entries := map[string]*audit.Entry{
		"svcbench's":          audit.FromExchange(benchExchange(1), 40*time.Millisecond),
		"a cache hit":         audit.FromExchange(hit, 0),
		"escapes and unicode": audit.FromExchange(odd, time.Millisecond),
		"every byte":          everyByte,
		"every field set":     filled(),
		"zero":                {},
	}
	for _, cost := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99e-7, 1.5e-8, -2.5e-10, 1e20, 1e21, 123456789.123456,
		5e-324, math.MaxFloat64, -math.MaxFloat64, 1.0000000000000002, 3e-5} {
		e := audit.FromExchange(benchExchange(7), 0)
		e.Cost, e.Metacache.CostSaved = cost, -cost
		entries["cost "+strings.ReplaceAll(json.Number(jsonFloat(cost)).String(), ".", "_")] = e
	}
	for name, e := range entries {
		t.Run(name, func(t *testing.T) {
			want := oracleJSON(t, e)
			if got := string(e.AppendJSON(nil)); got != want {
				t.Errorf("AppendJSON:\n got %s\nwant %s", got, want)
			}
			js, err := json.Marshal(e)
			if err != nil || string(js) != want {
				t.Errorf("json.Marshal (MarshalJSON): %s (%v)\nwant %s", js, err, want)
			}
			prefix := []byte("prefix:")
			if got := string(e.AppendJSON(prefix)); got != "prefix:"+want {
				t.Errorf("AppendJSON after a prefix: %s", got)
			}
		})
	}
}

func jsonFloat(f float64) string {
	js, _ := json.Marshal(f)
	return string(js)
}

// TestAppendJSONNonFinite checks the one departure from encoding/json: a
// cost that is not a number is written null, and the entry still decodes,
// with cost 0, rather than being refused.
func TestAppendJSONNonFinite(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		e := audit.FromExchange(benchExchange(8), 0)
		e.Cost = f
		js := e.AppendJSON(nil)
		if !strings.Contains(string(js), `"cost":null`) {
			t.Errorf("cost %v: %s, want \"cost\":null", f, js)
		}
		rec, err := audit.RecordFromJSON(js)
		if err != nil || rec.Cost != 0 || rec.RequestID != e.RequestID {
			t.Errorf("cost %v: RecordFromJSON = %+v, %v; want the record with cost 0", f, rec, err)
		}
	}
}

// FuzzAppendJSON compares AppendJSON with encoding/json on arbitrary text
// in the entry's strings and arbitrary costs.
func FuzzAppendJSON(f *testing.F) {
	f.Add("plain", "<&>\u2028", 0.5, int64(3))
	f.Add("\xff\x00\"\\", "é🙂\x7f", 1e-9, int64(-1))
	f.Fuzz(func(t *testing.T, a, b string, cost float64, n int64) {
		if math.IsNaN(cost) || math.IsInf(cost, 0) {
			return
		}
		e := audit.FromExchange(benchExchange(9), 0)
		e.UserID, e.Error, e.Model = a, b, a+b
		e.Metrics.CustomMetrics.APIKey = b
		e.ComplianceViolations = []string{a, b}
		e.Cost, e.TokensUsed, e.Status = cost, n, int(n)
		if want, got := oracleJSON(t, e), string(e.AppendJSON(nil)); got != want {
			t.Errorf("AppendJSON:\n got %s\nwant %s", got, want)
		}
	})
}

// TestSetCaller: a key's entry names the key as key_id and user_id; a
// signed-in user's names the user (no key) with their groups — the same
// form for model calls and tool calls.
func TestSetCaller(t *testing.T) {
	var k, u, none audit.Entry
	k.SetCaller(&identity.Principal{Kind: identity.VirtualKey, ID: "vk_1", MaskedKey: "sk-svc-ab…"})
	u.SetCaller(&identity.Principal{Kind: identity.User, ID: "alice", Groups: []string{"eng"}, AuthMethod: "saml"})
	none.SetCaller(nil)
	if k.UserID != "vk_1" || k.KeyID != "vk_1" || k.Metrics.CustomMetrics.APIKey != "sk-svc-ab…" || k.User != nil {
		t.Errorf("key: %+v", k)
	}
	if u.UserID != "alice" || u.KeyID != "" || u.User == nil || u.User.AuthMethod != "saml" {
		t.Errorf("user: user_id %q key_id %q user %+v", u.UserID, u.KeyID, u.User)
	}
	if none.UserID != "" || none.KeyID != "" {
		t.Errorf("no principal: %+v", none)
	}
}
