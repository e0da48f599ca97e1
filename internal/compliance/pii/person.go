package pii

import (
	_ "embed"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

//go:embed names/first_names.txt
var firstNamesText string

// firstNames is the embedded list of given names (names/SOURCES.md).
var firstNames = func() map[string]struct{} {
	m := make(map[string]struct{}, 5000)
	for _, l := range strings.Split(firstNamesText, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			m[l] = struct{}{}
		}
	}
	return m
}()

func listedName(key string) bool {
	_, ok := firstNames[key]
	return ok
}

// nameStop are capitalised words that begin no name and end one: pronouns,
// greetings' objects ("Dear Sir", "Hi Team"), days, months, roles,
// organisation words.
var nameStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the a an and or but of in on at for with by as i we you he she it they
	my your our his her their its this that these those there here please thanks thank hello hi hey dear
	sir madam madame team all everyone everybody folks guys people customer customers support manager
	managers hiring colleague colleagues friend friends user users admin administrator sales service
	services department office inc ltd llc gmbh corp co company group university college school hospital
	clinic bank street st road rd avenue ave lane drive boulevard monday tuesday wednesday thursday friday
	saturday sunday january february march april may june july august september october november december
	today tomorrow yesterday yes no ok okay not just also so if when what who how why where will can could
	would should might must welcome good great happy new best regards sincerely cheers kind warm
	mr mrs ms miss dr prof general chief ceo cto cfo coo vp director president assistant doctor nurse
	patient client member staff board committee council project product account order ticket issue update
	note re fw fwd subject from to cc bcc date time team hr it itself am is are was were be been being
	have has had do does did done again sorry there's let let's my name hereby attached enclosed regarding
	dear hallo liebe lieber bonjour hola sehr geehrte geehrter damen herren ladies gentlemen mesdames
	messieurs señores all whom concern hiring recruiter recruiting applicant candidate reader readers
	world guys family mom dad mum mother father brother sister son daughter wife husband boss partner
	partners investors shareholders members student students teacher teachers professor officer agent
	google microsoft amazon apple facebook meta openai anthropic github gitlab slack zoom teams outlook
	gmail yahoo linkedin twitter instagram whatsapp telegram signal python java javascript golang rust
	api json http https url sql aws gcp azure linux windows mac ios android chrome firefox safari
	north south east west new old big small first last next previous other another every each some any
	none nothing something everything note important urgent confidential private public internal
	external draft final version release notes summary overview introduction conclusion appendix
	section chapter page table figure example sample test demo dev prod production staging
	english german french spanish italian chinese japanese american british european
	please kindly here's that's what's it's i'm i've i'll you're we're they're`) {
		nameStop[w] = true
	}
}

// particles may stand between the words of a name ("Ludwig van Beethoven").
var particles = map[string]bool{"van": true, "von": true, "de": true, "der": true, "den": true,
	"da": true, "di": true, "du": true, "del": true, "della": true, "la": true, "le": true,
	"bin": true, "ibn": true, "al": true, "el": true, "ter": true, "ten": true, "dos": true,
	"das": true, "y": true, "zu": true, "af": true}

// name is a span of name words read by readName.
type name struct {
	start, end int
	words      int  // name words (initials and particles not counted)
	listed     bool // the first word is a listed given name
	caps       bool // every word is in capitals
	lineEnd    bool // only spaces and punctuation follow on its line
}

// readName reads up to four name words at i (after at most a few spaces,
// no line break): capitalised words, initials ("F."), particles between
// words. A stop word ends the name.
func readName(text string, i int) name {
	for k := 0; k < 3 && i < len(text) && (text[i] == ' ' || text[i] == '\t'); k++ {
		i++
	}
	nm := name{start: i, end: i, caps: true}
	var w word
	pos := i
	lastEnd := i
	for nm.words < 4 && pos < len(text) {
		if !startsLetter(text[pos:]) {
			break
		}
		e := readWord(text, pos, &w)
		key := w.k()
		switch {
		case w.n == 0:
			return finishName(text, nm, lastEnd)
		case w.upper && e-pos == 1 && e < len(text) && text[e] == '.':
			// An initial: part of the name only between words.
			if nm.words == 0 && !(e+2 < len(text) && text[e+1] == ' ' && isUpper(text[e+2])) {
				return finishName(text, nm, lastEnd)
			}
			e++
		case w.upper && !nameStop[key] && e-pos >= 2:
			if nm.words == 0 {
				nm.listed = listedName(key)
				nm.start = pos
			}
			nm.words++
			lastEnd = e
			if !allCaps(text[pos:e]) {
				nm.caps = false
			}
		case !w.upper && particles[key] && nm.words > 0:
		default:
			return finishName(text, nm, lastEnd)
		}
		// The next word must follow after one space.
		if e+1 < len(text) && text[e] == ' ' && startsLetter(text[e+1:]) {
			pos = e + 1
			continue
		}
		break
	}
	return finishName(text, nm, lastEnd)
}

func finishName(text string, nm name, end int) name {
	if nm.words == 0 {
		nm.end = nm.start
		return nm
	}
	nm.end = end
	j := end
	for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == ',' || text[j] == '.' || text[j] == '!' || text[j] == '\r') {
		j++
	}
	nm.lineEnd = j == len(text) || text[j] == '\n'
	return nm
}

func allCaps(s string) bool {
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// personAfter reads the name a key word of kind t announces.
func (s *wordScan) personAfter(text string, w *word, t trigger, dst []detect.Finding) []detect.Finding {
	at := w.end
	var score float64
	var rule string
	var nm name
	switch t {
	case tTitle:
		if !w.upper {
			return dst
		}
		if at < len(text) && text[at] == '.' {
			at++
		}
		if at >= len(text) || text[at] != ' ' {
			return dst
		}
		nm = readName(text, at)
		score, rule = 0.85, "person:title"
	case tGreet:
		nm = readName(text, skipTitle(text, at))
		score, rule = 0.8, "person:greeting"
	case tGreetWeak:
		if w.k() == "thanks" {
			if nm = signatureName(text, at); nm.words > 0 {
				score, rule = 0.75, "person:signature"
				break
			}
		}
		if !w.lineStart && !(s.prev.n > 0 && (s.prev.k() == "good" || s.prev.k() == "oh")) {
			return dst
		}
		nm = readName(text, skipTitle(text, at))
		if !nm.listed {
			return dst
		}
		score, rule = 0.75, "person:greeting"
	case tIntro:
		nm = readName(text, at)
		score, rule = 0.8, "person:intro"
	case tIntroWeak:
		nm = readName(text, at)
		if !nm.listed || nm.caps {
			return dst
		}
		score, rule = 0.7, "person:intro"
	case tLabel:
		if at >= len(text) || text[at] != ':' || w.n == 0 {
			return dst
		}
		nm = readName(text, skipTitle(text, at+1))
		if !nm.listed && nm.words < 2 || !nm.lineEnd && nm.words < 2 {
			return dst
		}
		score, rule = 0.75, "person:label"
	case tValediction:
		nm = signatureName(text, at)
		if nm.words == 1 && !nm.listed {
			score, rule = 0.6, "person:signature"
		} else {
			score, rule = 0.8, "person:signature"
		}
	default:
		return dst
	}
	if nm.words == 0 || nm.start < s.personEnd {
		return dst
	}
	if nm.listed && score < 0.9 {
		score += 0.05
	}
	s.personEnd = nm.end
	return append(dst, finding(detect.Person, nm.start, nm.end, score, rule))
}

// skipTitle returns the position after a title ("Mr. ", "Dr ") at i, or i.
func skipTitle(text string, i int) int {
	j := i
	for j < len(text) && text[j] == ' ' {
		j++
	}
	var w word
	if j >= len(text) || !startsLetter(text[j:]) {
		return i
	}
	e := readWord(text, j, &w)
	if triggers[w.k()] != tTitle || !w.upper {
		return i
	}
	if e < len(text) && text[e] == '.' {
		e++
	}
	return e
}

// signatureName reads the name on the line after a valediction
// ("Regards,\nJohn Smith"): the valediction ends its line (after ',' or
// '!'), the name fills the next line.
func signatureName(text string, at int) name {
	j := at
	for j < len(text) && (text[j] == ',' || text[j] == '!' || text[j] == '.' || text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
		j++
	}
	if j >= len(text) || text[j] != '\n' {
		return name{}
	}
	j++
	for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '-') {
		j++
	}
	nm := readName(text, j)
	if nm.words == 0 || !nm.lineEnd && !(nm.end < len(text) && (text[nm.end] == ',' || text[nm.end] == '|')) {
		return name{}
	}
	return nm
}

// bareName reports a listed given name followed by a capitalised surname
// with no cue around ("… and John Smith said …"): the lowest PERSON score.
func (s *wordScan) bareName(text string, w *word, dst []detect.Finding) []detect.Finding {
	if w.n == 0 || !listedName(w.k()) || allCaps(text[w.start:w.end]) {
		return dst
	}
	// Inside a run of capitalised words (a title, a heading) it is no name.
	if s.prev.upper && s.prev.end > 0 && w.start-s.prev.end <= 1 {
		return dst
	}
	nm := readName(text, w.start)
	if nm.start != w.start || nm.words < 2 || nm.words > 3 {
		return dst
	}
	// A capitalised word right after the name makes it a title too.
	if j := nm.end; j+1 < len(text) && text[j] == ' ' && startsUpper(text[j+1:]) {
		return dst
	}
	s.personEnd = nm.end
	return append(dst, finding(detect.Person, nm.start, nm.end, 0.6, "person:name-list"))
}

func startsUpper(s string) bool {
	if s == "" {
		return false
	}
	if s[0] < utf8.RuneSelf {
		return isUpper(s[0])
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}
