package verify

import "unicode"

// scriptCounts counts the letters of a text by script.
type scriptCounts struct {
	latin, cyrillic, greek, arabic, hebrew, han, kana, hangul, devanagari, thai int
	es, de, fr, pt, fritpt                                                      int // letters peculiar to some Latin-script languages
}

// add counts one rune.
func (s *scriptCounts) add(r rune) {
	if r < 0x80 {
		if r|0x20 >= 'a' && r|0x20 <= 'z' {
			s.latin++
		}
		return
	}
	switch {
	case unicode.Is(unicode.Latin, r):
		s.latin++
		switch r {
		case 'ñ', 'Ñ', '¿', '¡':
			s.es++
		case 'ß', 'ä', 'ö', 'ü', 'Ä', 'Ö', 'Ü':
			s.de++
		case 'ã', 'õ', 'Ã', 'Õ':
			s.pt++
		case 'ç', 'Ç':
			s.fritpt++
		case 'è', 'ê', 'â', 'î', 'û', 'ë', 'ï', 'œ':
			s.fr++
		}
	case unicode.Is(unicode.Cyrillic, r):
		s.cyrillic++
	case unicode.Is(unicode.Greek, r):
		s.greek++
	case unicode.Is(unicode.Arabic, r):
		s.arabic++
	case unicode.Is(unicode.Hebrew, r):
		s.hebrew++
	case unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
		s.kana++
	case unicode.Is(unicode.Han, r):
		s.han++
	case unicode.Is(unicode.Hangul, r):
		s.hangul++
	case unicode.Is(unicode.Devanagari, r):
		s.devanagari++
	case unicode.Is(unicode.Thai, r):
		s.thai++
	case r == '¿' || r == '¡':
		s.es++
	}
}

// lang identifies the language: by script when most letters are not Latin,
// else by the stopword profile with the most hits, when it leads (a tie, or
// no hit at all, is "": too short or too mixed to tell).
func (x *extractor) lang() string {
	s := &x.scripts
	other := s.cyrillic + s.greek + s.arabic + s.hebrew + s.han + s.kana + s.hangul + s.devanagari + s.thai
	if other > s.latin {
		// CJK text has no spaces: a handful of characters is enough.
		switch {
		case s.kana > 0:
			return "ja"
		case s.hangul >= s.han && s.hangul > 0:
			return "ko"
		case s.han > 0:
			return "zh"
		case s.cyrillic >= other/2:
			return "ru"
		case s.arabic >= other/2:
			return "ar"
		case s.greek >= other/2:
			return "el"
		case s.hebrew >= other/2:
			return "he"
		case s.devanagari >= other/2:
			return "hi"
		case s.thai >= other/2:
			return "th"
		}
		return ""
	}
	h := x.langHits
	h[langES] += 2 * s.es
	h[langDE] += 2 * s.de
	h[langPT] += 2 * s.pt
	h[langFR] += s.fr + s.fritpt
	h[langPT] += s.fritpt
	best, second := -1, 0
	for i := range h {
		switch {
		case best < 0 || h[i] > h[best]:
			if best >= 0 {
				second = h[best]
			}
			best = i
		case h[i] > second:
			second = h[i]
		}
	}
	if h[best] == 0 || h[best] <= second {
		return ""
	}
	return latinLangCodes[best]
}
