// Package auditchain owns the tamper-evident audit chain: an append-only
// record in SQL of the events that must be proven later (every admin action
// of the management API; the guard's decisions when the guard lands). Each
// entry is linked to the one before it by a hash, so that changing, deleting,
// inserting or reordering a stored entry is found by Verify, which names
// the first sequence number that no longer holds.
//
// # Entries
//
// An entry has seq (1, 2, … with no gap), event_type, actor, subject,
// details (a JSON object), timestamp (RFC 3339, UTC, exactly six fractional
// digits: 2026-05-01T12:00:00.000000Z), prev_hash (the hash of entry seq-1;
// 64 zeros for seq 1), alg and hash.
//
// # Canonical encoding
//
// hash is the lowercase hex of SHA-256 (alg "sha256") or, when the key
// SVC_AUDIT_CHAIN_KEY is set, of HMAC-SHA256 under the key's bytes (alg
// "hmac-sha256"), over exactly these bytes:
//
//	{"alg":A,"seq":N,"event_type":E,"actor":W,"subject":S,"details":D,"timestamp":T,"prev_hash":P}
//
// with no white space, the fields in that order, N in decimal without sign
// or leading zeros, and A, E, W, S, T, P as JSON strings written by one fixed
// rule: `"` and `\` as \" and \\, every byte below 0x20 as \u00XX (lowercase
// hex), every other byte as it is (the text is valid UTF-8 without NUL: a NUL
// or invalid byte is stored escaped as the text \x00 / \xHH before hashing).
// D is the details object's stored text, verbatim: at append it is encoded
// once with object keys sorted at every depth, numbers as given and no HTML
// escaping (Go's encoding/json), and from then on it is only ever hashed as
// stored, so verification never depends on re-encoding JSON. Every value in
// the document is a column of the stored row, so anyone holding a row can
// recompute its hash without svc.
//
// # Appends
//
// Appends are serialised across processes by the database: each runs in one
// transaction that first locks the one-row head table (audit_chain_head:
// the last seq and hash; PostgreSQL SELECT … FOR UPDATE, SQLite's write lock
// taken at BEGIN IMMEDIATE), inserts seq+1 linked to the head's hash and
// moves the head. seq is the primary key, so a lost race would fail loudly,
// never fork the chain.
//
// # The key
//
// With a key, rewriting the chain needs the key. The first entry appended
// under a key records where keyed entries begin (keyed_from on the head,
// authenticated by an HMAC under the key), so a chain started without a key
// may be keyed later: entries before keyed_from are plain SHA-256 and every
// one from keyed_from on must be HMAC. A head without a valid mark under the
// key requires every entry to be HMAC, so rewriting the whole chain with
// plain SHA-256 (and the mark away) is reported at seq 1. Once keyed, a
// process without the key refuses to append (ErrKeyRequired) and Verify
// without the key reports the first keyed entry, which it cannot check.
// Changing the key is not supported: entries under the old one no longer
// verify.
//
// # What verification cannot see
//
// Removing the newest entries and moving the head back to the last one kept
// leaves a valid, shorter chain; so does rewriting the whole chain when no
// key is set. Keep the head's seq and hash (Report.HeadHash) somewhere else
// to catch that.
//
// mgmt (the admin actions and /api/audit/*) and the wiring import
// auditchain; it imports sqlstore and client_golang.
package auditchain

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// Hash algorithms, as the alg field holds them.
const (
	AlgSHA256 = "sha256"
	AlgHMAC   = "hmac-sha256"
)

// GenesisHash is the prev_hash of entry 1.
const GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"

// TimeLayout is the canonical timestamp: RFC 3339, UTC, microseconds.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// Bounds of an event's fields, in bytes.
const (
	MaxEventType = 64
	MaxActor     = 512
	MaxSubject   = 4096
	MaxDetails   = 1 << 20
)

// Errors of Append.
var (
	// ErrInvalid is an event with an empty type or a field over its bound.
	ErrInvalid = errors.New("auditchain: invalid event")
	// ErrKeyRequired is an append without SVC_AUDIT_CHAIN_KEY to a chain
	// whose entries are keyed.
	ErrKeyRequired = errors.New("auditchain: the chain is keyed: SVC_AUDIT_CHAIN_KEY is required to append")
)

// Event is what a caller appends.
type Event struct {
	Type    string
	Actor   string
	Subject string
	// Details are the event's parameters, never a secret; nil is {}.
	Details map[string]any
}

// Entry is a stored entry of the chain.
type Entry struct {
	Seq       int64
	EventType string
	Actor     string
	Subject   string
	// Details is the details object's stored text, exactly as hashed.
	Details   json.RawMessage
	Timestamp time.Time // UTC, microseconds
	PrevHash  string
	Hash      string
	Alg       string
}

// entryJSON is an Entry as the API shows it.
type entryJSON struct {
	Seq       int64           `json:"seq"`
	EventType string          `json:"event_type"`
	Actor     string          `json:"actor"`
	Subject   string          `json:"subject"`
	Details   json.RawMessage `json:"details"`
	Timestamp string          `json:"timestamp"`
	PrevHash  string          `json:"prev_hash"`
	Hash      string          `json:"hash"`
	Alg       string          `json:"alg"`
}

// MarshalJSON writes the entry with its timestamp in the canonical form,
// so that the hash can be recomputed from the API's answer.
func (e Entry) MarshalJSON() ([]byte, error) {
	return json.Marshal(entryJSON{e.Seq, e.EventType, e.Actor, e.Subject, e.Details,
		e.Timestamp.UTC().Format(TimeLayout), e.PrevHash, e.Hash, e.Alg})
}

// UnmarshalJSON reads an entry as MarshalJSON writes it.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var j entryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	ts, err := time.Parse(time.RFC3339Nano, j.Timestamp)
	if err != nil {
		return fmt.Errorf("auditchain: entry timestamp: %w", err)
	}
	*e = Entry{j.Seq, j.EventType, j.Actor, j.Subject, j.Details, ts.UTC(), j.PrevHash, j.Hash, j.Alg}
	return nil
}

// Filter selects entries for List.
type Filter struct {
	EventType string // exact; "" for any
	Actor     string // exact; "" for any
	Limit     int    // 1 to MaxLimit; 0 is DefaultLimit
	Before    int64  // only entries with a smaller seq; 0 for none
}

// List bounds.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Report is the outcome of Verify.
type Report struct {
	OK bool `json:"ok"`
	// Entries is how many entries were found intact, in seq order from 1:
	// the whole chain when OK, else those before FirstBrokenSeq.
	Entries int64 `json:"entries"`
	// FirstBrokenSeq is the first seq that does not hold (nil when OK): its
	// hash does not recompute, its prev_hash is not the hash before it, its
	// alg is not the one the key requires, or it is missing (a deleted row,
	// or the newest rows beyond the last one stored).
	FirstBrokenSeq *int64 `json:"first_broken_seq"`
	// Reason says what failed there (empty when OK): hash, prev_hash, alg,
	// key_required, missing, head.
	Reason string `json:"reason,omitempty"`
	// HeadSeq and HeadHash are the chain's last entry as the head records
	// it: kept elsewhere, they catch a truncation.
	HeadSeq  int64  `json:"head_seq"`
	HeadHash string `json:"head_hash"`
}

// Reasons of a broken Report.
const (
	ReasonHash        = "hash"
	ReasonPrevHash    = "prev_hash"
	ReasonAlg         = "alg"
	ReasonKeyRequired = "key_required"
	ReasonMissing     = "missing"
	ReasonHead        = "head"
)

// Options configure a store.
type Options struct {
	// Key is SVC_AUDIT_CHAIN_KEY's bytes; empty: plain SHA-256.
	Key []byte
	// Metrics counts appends (may be nil).
	Metrics *Metrics
	// Now defaults to time.Now.
	Now func() time.Time
}

// Metrics are the chain's counters.
type Metrics struct {
	Appended prometheus.Counter // svc_audit_chain_entries_total
	Failures prometheus.Counter // svc_audit_chain_failures_total
}

// NewMetrics registers the chain's counters on reg (a nil reg registers
// nothing); a counter reg already holds is reused.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	return &Metrics{
		Appended: register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_audit_chain_entries_total", Help: "Entries appended to the tamper-evident audit chain.",
		})),
		Failures: register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_audit_chain_failures_total", Help: "Appends to the tamper-evident audit chain that failed (the event is not on the chain).",
		})),
	}
}

func register(reg prometheus.Registerer, c prometheus.Counter) prometheus.Counter {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(prometheus.Counter); ok {
				return old
			}
		}
		// A clash with a collector of another kind: count unregistered.
	}
	return c
}

// newEntry checks ev and returns its entry without seq, links or hash:
// text escaped as stored, details in canonical form, time truncated to the
// microsecond.
func newEntry(ev Event, now time.Time) (Entry, error) {
	e := Entry{
		EventType: sqlstore.EscapeText(ev.Type),
		Actor:     sqlstore.EscapeText(ev.Actor),
		Subject:   sqlstore.EscapeText(ev.Subject),
		Timestamp: sqlstore.FromMicros(sqlstore.Micros(now)),
	}
	switch {
	case e.EventType == "":
		return e, fmt.Errorf("%w: event type is empty", ErrInvalid)
	case len(e.EventType) > MaxEventType:
		return e, fmt.Errorf("%w: event type over %d bytes", ErrInvalid, MaxEventType)
	case len(e.Actor) > MaxActor:
		return e, fmt.Errorf("%w: actor over %d bytes", ErrInvalid, MaxActor)
	case len(e.Subject) > MaxSubject:
		return e, fmt.Errorf("%w: subject over %d bytes", ErrInvalid, MaxSubject)
	}
	d, err := canonicalDetails(ev.Details)
	if err != nil {
		return e, err
	}
	e.Details = d
	return e, nil
}

// canonicalDetails encodes details with object keys sorted at every depth:
// encoded once, decoded to plain values (numbers kept as written) and
// encoded again, so structs become sorted objects too.
func canonicalDetails(details map[string]any) (json.RawMessage, error) {
	if len(details) == 0 {
		return json.RawMessage("{}"), nil
	}
	first, err := encode(details)
	if err != nil {
		return nil, fmt.Errorf("%w: details: %v", ErrInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(first))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: details: %v", ErrInvalid, err)
	}
	out, err := encode(v)
	if err != nil {
		return nil, fmt.Errorf("%w: details: %v", ErrInvalid, err)
	}
	if len(out) > MaxDetails {
		return nil, fmt.Errorf("%w: details over %d bytes", ErrInvalid, MaxDetails)
	}
	return out, nil
}

func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Canonical returns the bytes e's hash is computed over (see the package
// documentation).
func (e *Entry) Canonical() []byte {
	b := make([]byte, 0, 256+len(e.Details)+len(e.Subject)+len(e.Actor))
	b = append(b, `{"alg":`...)
	b = appendString(b, e.Alg)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"event_type":`...)
	b = appendString(b, e.EventType)
	b = append(b, `,"actor":`...)
	b = appendString(b, e.Actor)
	b = append(b, `,"subject":`...)
	b = appendString(b, e.Subject)
	b = append(b, `,"details":`...)
	b = append(b, e.Details...)
	b = append(b, `,"timestamp":`...)
	b = appendString(b, e.Timestamp.UTC().Format(TimeLayout))
	b = append(b, `,"prev_hash":`...)
	b = appendString(b, e.PrevHash)
	return append(b, '}')
}

// appendString writes s as a JSON string by the package's one rule.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// hasher computes entry hashes: plain SHA-256, or HMAC-SHA256 under key.
type hasher struct{ key []byte }

// sum is the hex hash of e under alg; ok is false when alg needs a key the
// hasher does not have, or is unknown.
func (h hasher) sum(e *Entry) (sum string, ok bool) {
	var m hash.Hash
	switch {
	case e.Alg == AlgSHA256:
		m = sha256.New()
	case e.Alg == AlgHMAC && len(h.key) > 0:
		m = hmac.New(sha256.New, h.key)
	default:
		return "", false
	}
	m.Write(e.Canonical())
	return hex.EncodeToString(m.Sum(nil)), true
}

// alg is the algorithm of new entries.
func (h hasher) alg() string {
	if len(h.key) > 0 {
		return AlgHMAC
	}
	return AlgSHA256
}

// keyedMark authenticates keyedFrom, the first keyed seq, under the key.
func (h hasher) keyedMark(keyedFrom int64) string {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte("svc audit chain keyed from "))
	m.Write(strconv.AppendInt(nil, keyedFrom, 10))
	return hex.EncodeToString(m.Sum(nil))
}
