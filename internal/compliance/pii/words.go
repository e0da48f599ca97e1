package pii

import (
	"unicode"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// maxKey bounds the lower-cased key of a word; longer words are no key
// word.
const maxKey = 32

// word is one word of the text: letters, with inner apostrophes and dashes
// ("driver's", "Jean-Luc").
type word struct {
	start, end int
	key        [maxKey]byte // lower case; '’' written as '\''
	n          int          // len of key, 0 if the word is too long
	upper      bool         // the first letter is upper case
	lineStart  bool         // only spaces or list marks before it on its line
}

func (w *word) k() string { return string(w.key[:w.n]) }

// trigger kinds: what a key word announces.
type trigger uint8

const (
	tNone        trigger = iota
	tTitle               // Mr, Dr, Frau…: a name follows
	tGreet               // Dear, Liebe…: a name follows
	tGreetWeak           // Hi, Hello…: a listed first name follows
	tIntro               // "my name is", "call me": a name follows
	tIntroWeak           // "I am", "this is": a listed first name follows
	tLabel               // "Name:", "Patient:": a name follows the colon
	tValediction         // Regards, Thanks…: a name on the next line
	tDOB                 // born, DOB, Geburtsdatum: a date follows
	tPassport            // passport, Reisepass: a number follows
	tLicence             // driver's licence, Führerschein: a number follows
	tVerb                // reach, call, ask…: a name follows, then "at", a comma…
	tPhrase              // needs the previous word to mean something
)

var triggers = map[string]trigger{
	"mr": tTitle, "mrs": tTitle, "ms": tTitle, "miss": tTitle, "mx": tTitle, "dr": tTitle,
	"prof": tTitle, "professor": tTitle, "mister": tTitle, "herr": tTitle, "frau": tTitle,
	"mme": tTitle, "mlle": tTitle, "monsieur": tTitle, "madame": tTitle, "señor": tTitle,
	"señora": tTitle, "sr": tTitle, "sra": tTitle, "srta": tTitle, "sir": tTitle, "dame": tTitle,
	"lady": tTitle, "lord": tTitle, "rev": tTitle, "fr": tTitle, "sig": tTitle, "sig.ra": tTitle,

	"dear": tGreet, "liebe": tGreet, "lieber": tGreet, "cher": tGreet, "chère": tGreet,
	"querido": tGreet, "querida": tGreet, "estimado": tGreet, "estimada": tGreet,
	"geehrte": tGreet, "geehrter": tGreet, "caro": tGreet, "cara": tGreet,

	"hi": tGreetWeak, "hello": tGreetWeak, "hey": tGreetWeak, "hallo": tGreetWeak,
	"hola": tGreetWeak, "bonjour": tGreetWeak, "salut": tGreetWeak, "ciao": tGreetWeak,
	"moin": tGreetWeak, "servus": tGreetWeak, "morning": tGreetWeak, "afternoon": tGreetWeak,
	"evening": tGreetWeak, "thanks": tGreetWeak, "yo": tGreetWeak,

	"named": tIntroWeak, "called": tIntroWeak, "m'appelle": tIntro, "llamo": tIntro, "heiße": tIntro, "heisse": tIntro,
	"i'm": tIntroWeak, "soy": tIntroWeak, "sono": tIntroWeak,

	"name": tLabel, "nombre": tLabel, "nom": tLabel, "patient": tLabel, "customer": tLabel,
	"client": tLabel, "employee": tLabel, "applicant": tLabel, "attn": tLabel,
	"attention": tLabel, "author": tLabel, "from": tLabel, "to": tLabel, "cc": tLabel,
	"signed": tLabel, "recipient": tLabel, "sender": tLabel, "guest": tLabel,
	"passenger": tLabel, "beneficiary": tLabel, "holder": tLabel, "cardholder": tLabel,
	"contact": tLabel, "candidate": tLabel, "student": tLabel, "tenant": tLabel,
	"insured": tLabel, "member": tLabel, "user": tLabel, "owner": tLabel, "vorname": tLabel,
	"nachname": tLabel, "prénom": tLabel, "apellido": tLabel, "surname": tLabel,
	"record": tLabel, "lead": tLabel, "mitarbeiter": tLabel, "kunde": tLabel, "kundin": tLabel,
	"cliente": tLabel, "paciente": tLabel, "patientin": tLabel, "manager": tLabel,
	"assignee": tLabel, "reporter": tLabel, "requester": tLabel, "approver": tLabel,

	"reach": tVerb, "call": tVerb, "ask": tVerb, "email": tVerb, "e-mail": tVerb, "text": tVerb,
	"message": tVerb, "ping": tVerb, "tell": tVerb, "ring": tVerb, "thank": tVerb, "remind": tVerb,
	"meet": tVerb, "phone": tVerb, "notify": tVerb, "inform": tVerb, "contacted": tVerb,
	"met": tVerb, "spoke": tVerb, "talked": tVerb, "with": tVerb, "by": tVerb,

	"regards": tValediction, "sincerely": tValediction, "cheers": tValediction,
	"best": tValediction, "yours": tValediction, "truly": tValediction,
	"faithfully": tValediction, "respectfully": tValediction, "cordially": tValediction,
	"wishes": tValediction, "grüße": tValediction, "grüßen": tValediction, "gruß": tValediction,
	"grüsse": tValediction, "gruss": tValediction, "cordialement": tValediction,
	"saludos": tValediction, "atentamente": tValediction, "salutations": tValediction,
	"love": tValediction, "xoxo": tValediction, "thx": tValediction, "mfg": tValediction,
	"lg": tValediction, "vg": tValediction, "saluti": tValediction, "distinti": tValediction,
	"you": tPhrase, "vous": tValediction, "abrazo": tValediction,

	"born": tDOB, "dob": tDOB, "birthdate": tDOB, "birthday": tDOB, "geburtsdatum": tDOB,
	"geboren": tDOB, "geb": tDOB, "nacimiento": tDOB, "naissance": tDOB, "né": tDOB, "née": tDOB,
	"nato": tDOB, "nata": tDOB, "birth": tDOB, "geburtstag": tDOB, "d.o.b": tDOB,

	"passport": tPassport, "passports": tPassport, "reisepass": tPassport,
	"reisepassnummer": tPassport, "passnummer": tPassport, "pasaporte": tPassport,
	"passeport": tPassport, "passaporto": tPassport,

	"führerschein": tLicence, "führerscheinnummer": tLicence, "conducir": tLicence,
	"conduire": tLicence, "dl": tLicence, "dln": tLicence, "license": tPhrase,
	"licence": tPhrase, "of": tPhrase, "is": tPhrase, "am": tPhrase, "me": tPhrase, "ist": tPhrase,
	"es": tPhrase, "est": tPhrase, "bin": tPhrase, "suis": tPhrase, "heißt": tPhrase,
}

// wordScan is the state of one pass over the words of a text.
type wordScan struct {
	prev, prev2 *word
	ring        [3]word
	personEnd   int // end of the last PERSON found: no name starts before it
	lineStart   bool
}

// scanWords finds the context-bound types: it walks the words of text and,
// at each key word, reads what the key word announces.
func (d *Detectors) scanWords(text string, dst []detect.Finding) []detect.Finding {
	var s wordScan
	s.prev, s.prev2 = &s.ring[0], &s.ring[1]
	w := &s.ring[2]
	s.lineStart = true
	person, dob := d.on[detect.Person], d.on[detect.DateOfBirth]
	pass, lic := d.on[detect.Passport], d.on[detect.DriversLicense]
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf && !isLetter(c) {
			switch c {
			case '\n':
				s.lineStart = true
			case ' ', '\t', '\r', '>', '*', '-':
			default:
				s.lineStart = false
			}
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(text[i:])
			if !unicode.IsLetter(r) {
				s.lineStart = false
				i += n
				continue
			}
		}
		i = readWord(text, i, w)
		w.lineStart = s.lineStart
		s.lineStart = false
		t := tNone
		if w.n > 0 {
			t = triggerOf(w.k())
			if t == tPhrase {
				t = phrase(&s, w)
			}
		}
		switch t {
		case tDOB:
			if dob {
				dst = dobAfter(text, w, dst)
			}
		case tPassport:
			if pass {
				dst = idAfter(text, w.end, detect.Passport, dst)
			}
		case tLicence:
			if lic && (w.k() != "dl" || text[w.start] == 'D') {
				dst = idAfter(text, w.end, detect.DriversLicense, dst)
			}
		case tNone:
		default:
			if person {
				dst = s.personAfter(text, w, t, dst)
			}
		}
		if person && w.upper && w.start >= s.personEnd && t == tNone {
			dst = s.bareName(text, w, dst)
		}
		s.prev2, s.prev, w = s.prev, w, s.prev2
	}
	return dst
}

// phrase resolves a word that is a key word only after another: "my name
// is", "I am", "call me", "driver's licence", "thank you".
func phrase(s *wordScan, w *word) trigger {
	p, p2 := s.prev.k(), s.prev2.k()
	adjacent := s.prev.end > 0 && w.start-s.prev.end <= 2
	if !adjacent {
		return tNone
	}
	switch w.k() {
	case "is", "ist", "es", "est":
		if p == "name" || p == "nombre" || p == "nom" {
			return tIntro
		}
		if p == "this" || p == "it" {
			return tIntroWeak
		}
	case "am", "bin", "suis":
		if p == "i" || p == "ich" || p == "je" {
			return tIntroWeak
		}
	case "heißt":
		if p == "name" {
			return tIntro
		}
	case "me":
		if p == "call" {
			return tIntro
		}
	case "license", "licence":
		switch p {
		case "driver's", "drivers", "driver", "driving", "drivers'":
			return tLicence
		}
		if p == "commercial" || p2 == "driver's" {
			return tLicence
		}
	case "of":
		switch p {
		case "account", "behalf", "name", "care", "attention", "family":
			return tVerb
		}
	case "you":
		if p == "thank" {
			return tValediction
		}
	}
	return tNone
}

// readWord reads the word that starts at i into w and returns its end.
func readWord(text string, i int, w *word) int {
	w.start, w.n, w.upper = i, 0, false
	first := true
	overflow := false
	put := func(b ...byte) {
		if w.n+len(b) > maxKey {
			overflow = true
			return
		}
		w.n += copy(w.key[w.n:], b)
	}
	// The ASCII letters at the start, without the general loop.
	if i < len(text) && isLetter(text[i]) {
		w.upper = isUpper(text[i])
		first = false
		j := i
		for j < len(text) && isLetter(text[j]) {
			j++
		}
		if j-i > maxKey {
			overflow = true
		} else {
			for k := i; k < j; k++ {
				w.key[k-i] = text[k] | 0x20
			}
			w.n = j - i
		}
		i = j
		if i == len(text) || text[i] < utf8.RuneSelf && !isWordJoiner(text[i]) {
			return finish(w, i, overflow)
		}
	}
	for i < len(text) {
		c := text[i]
		switch {
		case isLetter(c):
			if first {
				w.upper = isUpper(c)
			}
			put(c | 0x20)
			i++
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(text[i:])
			if r == '’' && !first && i+n < len(text) && startsLetter(text[i+n:]) {
				put('\'')
				i += n
				continue
			}
			if !unicode.IsLetter(r) {
				return finish(w, i, overflow)
			}
			if first {
				w.upper = unicode.IsUpper(r)
			}
			var buf [utf8.UTFMax]byte
			m := utf8.EncodeRune(buf[:], unicode.ToLower(r))
			put(buf[:m]...)
			i += n
		case (c == '\'' || c == '-' || c == '.') && !first && i+1 < len(text) && startsLetter(text[i+1:]):
			// "d.o.b" is one word; other dotted words ("e.g") too.
			if c == '.' && !(i+2 < len(text) && text[i+2] == '.') && !(i >= 2 && text[i-2] == '.') {
				return finish(w, i, overflow)
			}
			put(c)
			i++
		default:
			return finish(w, i, overflow)
		}
		first = false
	}
	return finish(w, i, overflow)
}

// isWordJoiner reports whether c may join two parts of one word
// ("driver's", "Jean-Luc", "d.o.b").
func isWordJoiner(c byte) bool { return c == '\'' || c == '-' || c == '.' }

func finish(w *word, end int, overflow bool) int {
	w.end = end
	if overflow {
		w.n = 0
	}
	return end
}

// startsLetter reports whether s starts with a letter.
func startsLetter(s string) bool {
	if s == "" {
		return false
	}
	if s[0] < utf8.RuneSelf {
		return isLetter(s[0])
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

// keyFilter answers "may this key be in the set?" from its length and its
// first and last bytes, before a map lookup: most words of a text are no
// key word, and the filter turns them away without hashing.
type keyFilter [maxKey + 1][27]uint32

func letterIndex(c byte) int {
	if 'a' <= c && c <= 'z' {
		return int(c - 'a')
	}
	return 26
}

func (f *keyFilter) add(k string) {
	if n := len(k); n > 0 && n <= maxKey {
		f[n][letterIndex(k[0])] |= 1 << letterIndex(k[n-1])
	}
}

func (f *keyFilter) may(k string) bool {
	n := len(k)
	return n > 0 && n <= maxKey && f[n][letterIndex(k[0])]&(1<<letterIndex(k[n-1])) != 0
}

var triggerFilter = func() *keyFilter {
	f := new(keyFilter)
	for k := range triggers {
		f.add(k)
	}
	return f
}()

// triggerOf is the trigger kind of a key, tNone if it has none.
func triggerOf(k string) trigger {
	if !triggerFilter.may(k) {
		return tNone
	}
	return triggers[k]
}
