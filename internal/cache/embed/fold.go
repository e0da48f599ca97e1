package embed

// Fold returns what Local makes of one lower-case word w: the key it
// embeds — an abbreviation expanded, a number name made digits, a typo
// corrected, the word its first WordNet sense folds to, Porter-stemmed —
// and the part of speech of that sense: 'n', 'v', 'a' (adjective) or 'r'
// (adverb), or 0 when WordNet does not know the word. Two words with the
// same key are one word to Local; the cache's verification uses Fold so
// that its content-word check counts as equal exactly the words the
// embedder does. A stop word of Local ("question", "whether") is only
// stemmed. Fold decodes the lexicon on first use, as NewLocal does.
func Fold(w string) (key string, pos byte) {
	var buf [48]byte
	lex := lexicon()
	if _, stop := stopWords[w]; stop {
		// Local drops stop words: no alias, synonym or typo of theirs is
		// taken ("whether" is no typo of "weather").
		b := append(buf[:0], w...)
		e, _ := lookup(lex.words, b)
		return string(stem(b)), e.pos
	}
	if a, ok := aliases[w]; ok {
		w = a
	} else if n, ok := numberWords[w]; ok {
		w = n
	}
	b := append(buf[:0], w...)
	e, ok := lookup(lex.words, b)
	if !ok {
		e, ok = lex.correct(b)
	}
	if ok {
		pos = e.pos
		if _, stop := stopWords[e.canon]; !stop {
			b = append(buf[:0], e.canon...)
		}
	}
	return string(stem(b)), pos
}

// IsStopWord reports whether Local drops the lower-case English word w
// from a text that has other words: function words and the wording of
// requests ("how", "whether", "please", "question", "steps"). Local's stop
// words of other languages are not reported ("comment" is French for how).
func IsStopWord(w string) bool {
	_, stop := englishStops[w]
	return stop
}
