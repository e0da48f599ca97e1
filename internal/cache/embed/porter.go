package embed

// This file holds the Porter stemmer (M.F. Porter, "An algorithm for suffix
// stripping", 1980), on lower-case ASCII words. It works in place on a byte
// slice and allocates nothing.

// stem returns the Porter stem of the lower-case ASCII word w, reusing w's
// storage. Words of two letters or fewer, and words with a byte outside a–z,
// are returned unchanged.
func stem(w []byte) []byte {
	if len(w) <= 2 {
		return w
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return w
		}
	}
	s := stemmer{b: w}
	s.step1ab()
	if len(s.b) > 2 {
		s.step1c()
		s.step2()
		s.step3()
		s.step4()
		s.step5()
	}
	return s.b
}

type stemmer struct {
	b []byte
	j int // end of the stem proper once a suffix has matched
}

// cons reports whether b[i] is a consonant.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !s.cons(i-1)
	}
	return true
}

// m counts the VC sequences in b[:j+1].
func (s *stemmer) m() int {
	n, i := 0, 0
	for ; ; i++ {
		if i > s.j {
			return n
		}
		if !s.cons(i) {
			break
		}
	}
	i++
	for {
		for ; ; i++ {
			if i > s.j {
				return n
			}
			if s.cons(i) {
				break
			}
		}
		i++
		n++
		for ; ; i++ {
			if i > s.j {
				return n
			}
			if !s.cons(i) {
				break
			}
		}
		i++
	}
}

// vowelInStem reports whether b[:j+1] holds a vowel.
func (s *stemmer) vowelInStem() bool {
	for i := 0; i <= s.j; i++ {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

// doublec reports whether b[i-1:i+1] is a double consonant.
func (s *stemmer) doublec(i int) bool {
	return i >= 1 && s.b[i] == s.b[i-1] && s.cons(i)
}

// cvc reports whether b[i-2:i+1] is consonant-vowel-consonant with the last
// not w, x or y: the stem of hop(e), not of hoop.
func (s *stemmer) cvc(i int) bool {
	if i < 2 || !s.cons(i) || s.cons(i-1) || !s.cons(i-2) {
		return false
	}
	switch s.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether b ends with suf, setting j to the end of the rest.
func (s *stemmer) ends(suf string) bool {
	n := len(suf)
	if n > len(s.b) || string(s.b[len(s.b)-n:]) != suf {
		return false
	}
	s.j = len(s.b) - n - 1
	return true
}

// setto replaces b[j+1:] by r.
func (s *stemmer) setto(r string) {
	s.b = append(s.b[:s.j+1], r...)
}

// r replaces the suffix by r if the stem has m > 0.
func (s *stemmer) r(r string) {
	if s.m() > 0 {
		s.setto(r)
	}
}

// step1ab removes plurals and -ed or -ing: caresses→caress, ponies→poni,
// feed→feed, agreed→agree, plastered→plaster, motoring→motor, hoping→hope.
func (s *stemmer) step1ab() {
	k := len(s.b) - 1
	if s.b[k] == 's' {
		switch {
		case s.ends("sses"):
			s.b = s.b[:k-1]
		case s.ends("ies"):
			s.setto("i")
		case s.b[k-1] != 's':
			s.b = s.b[:k]
		}
	}
	if s.ends("eed") {
		if s.m() > 0 {
			s.b = s.b[:len(s.b)-1]
		}
		return
	}
	if (s.ends("ed") || s.ends("ing")) && s.vowelInStem() {
		s.b = s.b[:s.j+1]
		k = len(s.b) - 1
		switch {
		case s.ends("at"):
			s.setto("ate")
		case s.ends("bl"):
			s.setto("ble")
		case s.ends("iz"):
			s.setto("ize")
		case s.doublec(k):
			switch s.b[k] {
			case 'l', 's', 'z':
			default:
				s.b = s.b[:k]
			}
		default:
			s.j = k
			if s.m() == 1 && s.cvc(k) {
				s.b = append(s.b, 'e')
			}
		}
	}
}

// step1c turns a final y into i when there is another vowel in the stem.
func (s *stemmer) step1c() {
	if s.ends("y") && s.vowelInStem() {
		s.b[len(s.b)-1] = 'i'
	}
}

// step2 maps double suffixes to single ones: -ization→-ize, -ational→-ate.
func (s *stemmer) step2() {
	if len(s.b) < 2 {
		return
	}
	switch s.b[len(s.b)-2] {
	case 'a':
		if s.ends("ational") {
			s.r("ate")
		} else if s.ends("tional") {
			s.r("tion")
		}
	case 'c':
		if s.ends("enci") {
			s.r("ence")
		} else if s.ends("anci") {
			s.r("ance")
		}
	case 'e':
		if s.ends("izer") {
			s.r("ize")
		}
	case 'l':
		switch {
		case s.ends("bli"):
			s.r("ble")
		case s.ends("alli"):
			s.r("al")
		case s.ends("entli"):
			s.r("ent")
		case s.ends("eli"):
			s.r("e")
		case s.ends("ousli"):
			s.r("ous")
		}
	case 'o':
		switch {
		case s.ends("ization"):
			s.r("ize")
		case s.ends("ation"):
			s.r("ate")
		case s.ends("ator"):
			s.r("ate")
		}
	case 's':
		switch {
		case s.ends("alism"):
			s.r("al")
		case s.ends("iveness"):
			s.r("ive")
		case s.ends("fulness"):
			s.r("ful")
		case s.ends("ousness"):
			s.r("ous")
		}
	case 't':
		switch {
		case s.ends("aliti"):
			s.r("al")
		case s.ends("iviti"):
			s.r("ive")
		case s.ends("biliti"):
			s.r("ble")
		}
	case 'g':
		if s.ends("logi") {
			s.r("log")
		}
	}
}

// step3 handles -ic-, -full, -ness and the like.
func (s *stemmer) step3() {
	switch s.b[len(s.b)-1] {
	case 'e':
		switch {
		case s.ends("icate"):
			s.r("ic")
		case s.ends("ative"):
			s.r("")
		case s.ends("alize"):
			s.r("al")
		}
	case 'i':
		if s.ends("iciti") {
			s.r("ic")
		}
	case 'l':
		if s.ends("ical") {
			s.r("ic")
		} else if s.ends("ful") {
			s.r("")
		}
	case 's':
		if s.ends("ness") {
			s.r("")
		}
	}
}

// step4 removes -ant, -ence and the like when the stem has m > 1.
func (s *stemmer) step4() {
	if len(s.b) < 2 {
		return
	}
	found := false
	switch s.b[len(s.b)-2] {
	case 'a':
		found = s.ends("al")
	case 'c':
		found = s.ends("ance") || s.ends("ence")
	case 'e':
		found = s.ends("er")
	case 'i':
		found = s.ends("ic")
	case 'l':
		found = s.ends("able") || s.ends("ible")
	case 'n':
		found = s.ends("ant") || s.ends("ement") || s.ends("ment") || s.ends("ent")
	case 'o':
		if s.ends("ion") {
			found = s.j >= 0 && (s.b[s.j] == 's' || s.b[s.j] == 't')
		} else {
			found = s.ends("ou")
		}
	case 's':
		found = s.ends("ism")
	case 't':
		found = s.ends("ate") || s.ends("iti")
	case 'u':
		found = s.ends("ous")
	case 'v':
		found = s.ends("ive")
	case 'z':
		found = s.ends("ize")
	}
	if found && s.m() > 1 {
		s.b = s.b[:s.j+1]
	}
}

// step5 removes a final -e when m > 1 (or m = 1 and not cvc), and turns -ll
// into -l when m > 1.
func (s *stemmer) step5() {
	k := len(s.b) - 1
	s.j = k
	if s.b[k] == 'e' {
		s.j = k - 1
		if a := s.m(); a > 1 || a == 1 && !s.cvc(k-1) {
			s.b = s.b[:k]
		}
		k = len(s.b) - 1
		s.j = k
	}
	if s.b[k] == 'l' && s.doublec(k) && s.m() > 1 {
		s.b = s.b[:k]
	}
}
