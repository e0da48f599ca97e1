package secrets

import (
	"bytes"
	"slices"
	"strings"
)

// This file runs the rules' patterns the cheap way each allows (see
// Stats): anchored at a literal prefix, in windows around a literal every
// match holds, or anchored at an assignment's name.

// runPrefix runs a rule whose matches all start with one of r.lits:
// anchored at each occurrence, in order, never inside an earlier match,
// which finds what r.re.FindAll would.
func (e *engine) runPrefix(sc *scratch, r *rule, text string) {
	sc.cands = sc.cands[:0]
	for _, lit := range r.lits {
		if r.fold {
			l := []byte(lit) // small; the compiler keeps it on the stack
			for at := 0; at < len(sc.lower); {
				j := bytes.Index(sc.lower[at:], l)
				if j < 0 {
					break
				}
				sc.cands = append(sc.cands, int32(at+j))
				at += j + 1
			}
			continue
		}
		for at := 0; at < len(text); {
			j := strings.Index(text[at:], lit)
			if j < 0 {
				break
			}
			sc.cands = append(sc.cands, int32(at+j))
			at += j + 1
		}
	}
	if len(r.lits) > 1 {
		slices.Sort(sc.cands)
	}
	last := 0
	for i, c := range sc.cands {
		p := int(c)
		if p < last || i > 0 && sc.cands[i-1] == c {
			continue
		}
		if r.leadBound && p > 0 && isWord(text[p-1]) {
			continue
		}
		end := len(text)
		if r.maxLen >= 0 {
			end = min(end, p+r.maxLen+1)
		}
		m := r.anchored.FindStringSubmatchIndex(text[p:end])
		if m == nil || p+m[1] == end && end < len(text) {
			continue
		}
		e.emit(sc, r, text, m, p)
		last = p + m[1]
	}
}

// runRequired runs a rule whose every match holds one of r.lits (lower
// case) and is at most r.maxLen long: in windows reaching r.maxLen past
// each occurrence on both sides, merged. Matches touching a window's edge
// (where ^, $ or \b would see the window's end rather than the text's) are
// dropped: a match holding an occurrence lies strictly inside its window.
func (e *engine) runRequired(sc *scratch, r *rule, text string) {
	sc.wins = sc.wins[:0]
	for _, lit := range r.lits {
		l := []byte(lit)
		for at := 0; at < len(sc.lower); {
			j := bytes.Index(sc.lower[at:], l)
			if j < 0 {
				break
			}
			p := at + j
			sc.wins = append(sc.wins, [2]int{max(0, p-r.maxLen-1), min(len(text), p+len(l)+r.maxLen+1)})
			at = p + 1
		}
	}
	for _, w := range mergeWindows(sc.wins) {
		for _, m := range r.re.FindAllStringSubmatchIndex(text[w[0]:w[1]], -1) {
			if w[0] > 0 && m[0] == 0 || w[0]+m[1] == w[1] && w[1] < len(text) {
				continue
			}
			e.emit(sc, r, text, m, w[0])
		}
	}
}

// mergeWindows sorts windows and merges overlapping ones, in place.
func mergeWindows(wins [][2]int) [][2]int {
	if len(wins) == 0 {
		return wins
	}
	slices.SortFunc(wins, func(a, b [2]int) int { return a[0] - b[0] })
	merged := wins[:1]
	for _, w := range wins[1:] {
		if last := &merged[len(merged)-1]; w[0] <= last[1] {
			last[1] = max(last[1], w[1])
		} else {
			merged = append(merged, w)
		}
	}
	return merged
}

// runAssign runs a rule of gitleaks' assignment template
// (`[\w.-]{0,50}?<name>[ \t\w.-]{0,20}[\s'"]{0,3}<op>[\x60'"\s=]{0,5}
// <value><end>`) only at occurrences of the name's literals that an
// operator follows within 23 bytes (plus what of the name the literal
// leaves) and a run of value bytes long enough within 9 bytes of that:
// anchored at the start of the [\w.-] bytes before the literal (at most 50,
// or 100, of them), up to just past the run. A match touching the right
// edge is dropped, so `$` cannot match there.
func (e *engine) runAssign(sc *scratch, ri int, r *rule, text string) {
	n := len(text)
	lastWS, lastEnd := -1, 0
	for hi, h := range sc.hits {
		if !slices.Contains(e.targets[h.pat], anchorBase+int32(ri)) {
			continue
		}
		op := sc.op(hi, text)
		if op < 0 || op-int(h.end) > r.opBudget {
			continue
		}
		vEnd, ok := r.valueAfter(text, op)
		if !ok {
			continue
		}
		// The name's [\w.-] prefix: a match holding this literal starts at
		// the first of those bytes before it (the prefix takes any of them).
		ws := int(h.start)
		for ws > 0 && int(h.start)-ws < r.reach && (isWord(text[ws-1]) || text[ws-1] == '.' || text[ws-1] == '-') {
			ws--
		}
		if ws == lastWS || ws < lastEnd {
			continue // the same name again, or inside the last match
		}
		lastWS = ws
		we := vEnd
		for we < n && isClosing(text[we]) && we-vEnd < 64 {
			we++
		}
		we = min(n, we+3)
		m := r.anchored.FindStringSubmatchIndex(text[ws:we])
		if m == nil || ws+m[1] == we && we < n {
			continue
		}
		e.emit(sc, r, text, m, ws)
		lastEnd = ws + m[1]
	}
}

// op finds, for hit i, the first assignment operator after it that only
// word characters, '.', '-', spaces and quotes separate from it (within 64
// bytes).
func (sc *scratch) op(i int, text string) int {
	if sc.opAt[i] != -2 {
		return int(sc.opAt[i])
	}
	at := -1
	e := int(sc.hits[i].end)
	for j := e; j < len(text) && j <= e+64; j++ {
		c := text[j]
		if c == '=' || c == '>' || c == ':' || c == '|' || c == '?' || c == ',' {
			at = j
			break
		}
		if !isWord(c) && c != '.' && c != '-' && !isSpace(c) && c != '\'' && c != '"' {
			break
		}
	}
	sc.opAt[i] = int32(at)
	return at
}

// valueAfter reports whether a value of r can follow the operator at op
// (after at most 4 operator and 5 quote/space/'=' bytes) and where the run
// of value bytes it would lie in ends.
func (r *rule) valueAfter(text string, op int) (int, bool) {
	limit := 4096
	if r.valueMax >= 0 {
		limit = r.valueMax + 10 // the run may start with quote/'=' bytes before the value
	}
	for j := op + 1; j <= op+9 && j < len(text); j++ {
		c := text[j]
		if r.valueAnyOK {
			return min(len(text), j+limit), true
		}
		if r.valueSet[c] {
			k := j
			for k < len(text) && k-j < limit && r.valueSet[text[k]] {
				k++
			}
			if k-j >= r.valueMin {
				return k, true
			}
		}
		switch c {
		case '=', '>', ':', '|', '?', '`', '\'', '"', ' ', '\t', '\n', '\r', '\f':
		default:
			return 0, false
		}
	}
	return 0, false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func isClosing(c byte) bool {
	switch c {
	case '.', ',', ':', '!', '?', ')', ']', '}', '>':
		return true
	}
	return false
}
