package pii

// maxWindow bounds the context window of near and before.
const maxWindow = 128

// wordSet is a list of context words (lower case; a word may hold spaces
// or punctuation: "call back", "ss#") made ready for near: indexed by
// their first token, a token being a maximal run of ASCII letters and
// digits and non-ASCII bytes.
type wordSet struct {
	first map[string][]string
	odd   []string // words that start with another byte ("§")
}

func newWordSet(words ...string) *wordSet {
	ws := &wordSet{first: map[string][]string{}}
	for _, w := range words {
		n := 0
		for n < len(w) && tokenByte(w[n]) {
			n++
		}
		if n == 0 {
			ws.odd = append(ws.odd, w)
			continue
		}
		ws.first[w[:n]] = append(ws.first[w[:n]], w)
	}
	return ws
}

func tokenByte(c byte) bool { return isAlnum(c) || c >= 0x80 }

// near reports whether one of ws's words is within window bytes of
// text[start:end], before or after it, as a whole word, ASCII case folded:
// what detect.Near reports, with the words indexed by their first token (pii
// weighs many candidates against long word lists), and nearWord says which
// word it was.
func near(text string, start, end, window int, ws *wordSet) bool {
	return nearWord(text, start, end, window, ws) != ""
}

// nearWord is near returning the word found, "" if none.
func nearWord(text string, start, end, window int, ws *wordSet) string {
	if start < 0 || end > len(text) || start > end {
		return ""
	}
	window = min(window, maxWindow)
	var buf [maxWindow]byte
	if w := ws.find(fold(buf[:], text[max(0, start-window):start])); w != "" {
		return w
	}
	return ws.find(fold(buf[:], text[end:min(len(text), end+window)]))
}

// before reports whether one of ws's words is within window bytes before
// start.
func before(text string, start, window int, ws *wordSet) bool {
	if start < 0 || start > len(text) {
		return false
	}
	var buf [maxWindow]byte
	return ws.find(fold(buf[:], text[max(0, start-min(window, maxWindow)):start])) != ""
}

// fold copies s, ASCII letters in lower case, into buf and returns the
// copy; len(s) <= len(buf).
func fold(buf []byte, s string) []byte {
	n := copy(buf, s)
	b := buf[:n]
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// next returns the first of ws's words that low holds at or after from,
// as find does, and the index it starts at; "" and len(low) if none.
func (ws *wordSet) next(low []byte, from int) (string, int) {
	for i := from; i < len(low); {
		if !tokenByte(low[i]) {
			i++
			continue
		}
		j := i
		for j < len(low) && tokenByte(low[j]) {
			j++
		}
		if i == 0 || !isAlnum(low[i-1]) {
			for _, w := range ws.first[string(low[i:j])] {
				if len(w) <= len(low)-i && string(low[i:i+len(w)]) == w && (i+len(w) == len(low) || !isAlnum(low[i+len(w)])) {
					return w, i
				}
			}
		}
		i = j
	}
	return "", len(low)
}

// find returns the first of ws's words that low holds with no ASCII
// letter or digit right before or after it, "" if none.
func (ws *wordSet) find(low []byte) string {
	if w, _ := ws.next(low, 0); w != "" {
		return w
	}
	for _, w := range ws.odd {
		for k := 0; k+len(w) <= len(low); k++ {
			if string(low[k:k+len(w)]) == w && (k+len(w) == len(low) || !isAlnum(low[k+len(w)])) {
				return w
			}
		}
	}
	return ""
}
