package auditchain

import "crypto/hmac"

// head is the chain's head row: its last entry and where keyed entries
// begin.
type head struct {
	seq       int64
	hash      string
	keyedFrom int64  // first seq appended under a key; 0: none
	keyedMark string // hasher.keyedMark(keyedFrom)
}

// verifier walks entries in seq order and stops at the first that does not
// hold.
type verifier struct {
	h hasher
	// keyedFrom is the first seq that must be HMAC (with a key), or that
	// cannot be checked (without one).
	keyedFrom int64
	next      int64  // the seq expected next
	prev      string // the hash the next entry must link to
	broken    *int64
	reason    string
}

// newVerifier starts a walk from seq 1. With a key, entries before the
// head's keyed_from may be plain only when the mark on the head is valid
// under the key; else every entry must be HMAC. Without a key, entries from
// keyed_from on cannot be checked.
func newVerifier(h hasher, hd head) *verifier {
	v := &verifier{h: h, next: 1, prev: GenesisHash}
	switch {
	case len(h.key) == 0:
		v.keyedFrom = hd.keyedFrom
	case hd.keyedFrom > 0 && hmac.Equal([]byte(h.keyedMark(hd.keyedFrom)), []byte(hd.keyedMark)):
		v.keyedFrom = hd.keyedFrom
	default:
		v.keyedFrom = 1
	}
	return v
}

// check takes the next entry of the walk; false when the chain is broken
// (at or before e).
func (v *verifier) check(e *Entry) bool {
	switch {
	case e.Seq != v.next:
		return v.fail(v.next, ReasonMissing)
	case e.PrevHash != v.prev:
		return v.fail(e.Seq, ReasonPrevHash)
	case v.keyedFrom > 0 && e.Seq >= v.keyedFrom && len(v.h.key) == 0:
		return v.fail(e.Seq, ReasonKeyRequired)
	case v.keyedFrom > 0 && (e.Seq >= v.keyedFrom) != (e.Alg == AlgHMAC):
		return v.fail(e.Seq, ReasonAlg)
	case v.keyedFrom == 0 && e.Alg != AlgSHA256:
		// No key was ever recorded: only plain entries belong here.
		return v.fail(e.Seq, ReasonAlg)
	}
	sum, ok := v.h.sum(e)
	if !ok || !hmac.Equal([]byte(sum), []byte(e.Hash)) {
		return v.fail(e.Seq, ReasonHash)
	}
	v.next++
	v.prev = e.Hash
	return true
}

// end checks the walk against the head hd it started from: every entry up
// to the head's seq was seen and the last one has the head's hash. headNow
// is the head's seq when the walk ended and beyond whether a row past it is
// stored: one not appended through the head.
func (v *verifier) end(hd head, headNow int64, beyond bool) {
	switch {
	case v.broken != nil:
	case v.next <= hd.seq:
		v.fail(v.next, ReasonMissing)
	case v.prev != hd.hash:
		v.fail(hd.seq, ReasonHead)
	case beyond:
		v.fail(headNow+1, ReasonHead)
	}
}

func (v *verifier) fail(seq int64, reason string) bool {
	v.broken, v.reason = &seq, reason
	return false
}

func (v *verifier) report(hd head) Report {
	entries := v.next - 1
	if v.broken != nil {
		entries = min(entries, *v.broken-1)
	}
	return Report{OK: v.broken == nil, Entries: entries, FirstBrokenSeq: v.broken, Reason: v.reason,
		HeadSeq: hd.seq, HeadHash: hd.hash}
}
