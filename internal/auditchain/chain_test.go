package auditchain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCanonical pins the documented encoding byte for byte: a change to it
// would make every stored hash fail to recompute.
func TestCanonical(t *testing.T) {
	e := Entry{
		Seq: 12, EventType: "vkey.create", Actor: "admin", Subject: "a\"b\\c\n\x01é<",
		Details:   json.RawMessage(`{"a":1,"b":[true,null]}`),
		Timestamp: time.Date(2026, 5, 1, 12, 0, 0, 7000, time.FixedZone("x", 3600)),
		PrevHash:  GenesisHash, Alg: AlgSHA256,
	}
	want := `{"alg":"sha256","seq":12,"event_type":"vkey.create","actor":"admin","subject":"a\"b\\c\u000a\u0001é<",` +
		`"details":{"a":1,"b":[true,null]},"timestamp":"2026-05-01T11:00:00.000007Z","prev_hash":"` + GenesisHash + `"}`
	if got := string(e.Canonical()); got != want {
		t.Fatalf("Canonical:\n got %s\nwant %s", got, want)
	}
	if !json.Valid(e.Canonical()) {
		t.Error("the canonical encoding is not JSON")
	}
	plain := sha256.Sum256([]byte(want))
	if got, ok := (hasher{}).sum(&e); !ok || got != hex.EncodeToString(plain[:]) {
		t.Errorf("sha256 sum = %q, %v; want %x", got, ok, plain)
	}
	e.Alg = AlgHMAC
	if _, ok := (hasher{}).sum(&e); ok {
		t.Error("an HMAC entry was summed without a key")
	}
	key := []byte("k-0123456789abcdef0123456789abcdef")
	m := hmac.New(sha256.New, key)
	m.Write([]byte(strings.Replace(want, `"sha256"`, `"hmac-sha256"`, 1)))
	if got, ok := (hasher{key: key}).sum(&e); !ok || got != hex.EncodeToString(m.Sum(nil)) {
		t.Errorf("hmac sum = %q, %v; want %x", got, ok, m.Sum(nil))
	}
}

func TestCanonicalDetails(t *testing.T) {
	type inner struct {
		Z int    `json:"z"`
		A string `json:"a"`
	}
	for _, c := range []struct {
		in   map[string]any
		want string
	}{
		{nil, `{}`},
		{map[string]any{}, `{}`},
		{map[string]any{"b": 1, "a": "<&>", "c": inner{Z: 1, A: "x"}}, `{"a":"<&>","b":1,"c":{"a":"x","z":1}}`},
		{map[string]any{"n": 1.5e300, "big": int64(1) << 62, "list": []any{map[string]any{"y": 1, "x": 2}}},
			`{"big":4611686018427387904,"list":[{"x":2,"y":1}],"n":1.5e+300}`},
	} {
		got, err := canonicalDetails(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("canonicalDetails(%v) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := canonicalDetails(map[string]any{"f": func() {}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unencodable details: got %v, want ErrInvalid", err)
	}
	if _, err := canonicalDetails(map[string]any{"s": strings.Repeat("x", MaxDetails)}); !errors.Is(err, ErrInvalid) {
		t.Errorf("details over MaxDetails: got %v, want ErrInvalid", err)
	}
}

func TestNewEntry(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC)
	e, err := newEntry(Event{Type: "t", Actor: "a\x00b", Subject: "s\xff"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if e.Actor != `a\x00b` || e.Subject != `s\xff` {
		t.Errorf("text not escaped as stored: actor %q subject %q", e.Actor, e.Subject)
	}
	if want := now.Truncate(time.Microsecond); !e.Timestamp.Equal(want) {
		t.Errorf("timestamp %v, want %v", e.Timestamp, want)
	}
	for _, ev := range []Event{
		{},
		{Type: strings.Repeat("t", MaxEventType+1)},
		{Type: "t", Actor: strings.Repeat("a", MaxActor+1)},
		{Type: "t", Subject: strings.Repeat("s", MaxSubject+1)},
	} {
		if _, err := newEntry(ev, now); !errors.Is(err, ErrInvalid) {
			t.Errorf("newEntry(type %d bytes, actor %d, subject %d): got %v, want ErrInvalid", len(ev.Type), len(ev.Actor), len(ev.Subject), err)
		}
	}
}

func TestEntryJSON(t *testing.T) {
	e := Entry{Seq: 1, EventType: "t", Details: json.RawMessage(`{"k":"v"}`),
		Timestamp: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), PrevHash: GenesisHash, Hash: "h", Alg: AlgSHA256}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":1,"event_type":"t","actor":"","subject":"","details":{"k":"v"},"timestamp":"2026-05-01T12:00:00.000000Z","prev_hash":"` +
		GenesisHash + `","hash":"h","alg":"sha256"}`
	if string(b) != want {
		t.Errorf("JSON:\n got %s\nwant %s", b, want)
	}
	var back Entry
	if err := json.Unmarshal(b, &back); err != nil || !back.Timestamp.Equal(e.Timestamp) || string(back.Details) != string(e.Details) ||
		back.Seq != e.Seq || back.Hash != e.Hash || back.PrevHash != e.PrevHash || back.Alg != e.Alg || back.EventType != e.EventType {
		t.Errorf("read back %+v, %v; want %+v", back, err, e)
	}
	if sum, _ := (hasher{}).sum(&back); sum != func() string { s, _ := (hasher{}).sum(&e); return s }() {
		t.Error("the entry read back from JSON hashes differently")
	}
}
