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

var nameFilter = func() *keyFilter {
	f := new(keyFilter)
	for k := range firstNames {
		f.add(k)
	}
	return f
}()

func listedName(key string) bool {
	if !nameFilter.may(key) {
		return false
	}
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
	please kindly here's that's what's it's i'm i've i'll you're we're they're
	portal success experience care relations data records record id number account info information
	details profile list feedback satisfaction login access history file files report reports notes
	service desk center centre care unit ward room floor building level tier plan plans premium
	enterprise business personal checking savings card cards credit debit visa mastercard amex
	via email phone mobile fax address zip code city state country street postal
	mon tue wed thu fri sat sun jan feb mar apr jun jul aug sep sept oct nov dec am pm utc gmt est pst
	q1 q2 q3 q4 one two three four five six seven eight nine ten
	network networks connection adapter device devices host server servers folder project branch
	organization org workspace repository repo database column field model class function method
	variable module package library service wireless local area
	claude gemini siri alexa cortana copilot llama mistral grok chatgpt gpt bard jarvis bing
	hills park city springs beach valley heights island islands lake falls bay harbor harbour creek
	ridge station airport county bridge square plaza mountain mountains river gardens village
	township district avenue boulevard highway parkway terrace court`) {
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
	punct      bool // punctuation (,;:!?|()) or the end of the line follows
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
	initials := false
	for tokens := 0; nm.words < 4 && tokens < 8 && pos < len(text); tokens++ {
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
			if nm.words == 0 && !initials {
				nm.start = pos
			}
			initials = true
			e++
		case w.upper && !nameStop[key] && e-pos >= 2 && !camel(text[pos:e]):
			if nm.words == 0 {
				nm.listed = listedName(key)
				if !initials {
					nm.start = pos
				}
			}
			// A possessive is not part of the name: "Anna's".
			if strings.HasSuffix(key, "'s") {
				if text[e-2] == '\'' {
					e -= 2
				} else if strings.HasSuffix(text[:e], "’s") {
					e -= len("’s")
				}
				nm.words++
				lastEnd = e
				return finishName(text, nm, lastEnd)
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
	k := end
	for k < len(text) && text[k] == ' ' {
		k++
	}
	nm.punct = nm.lineEnd || k < len(text) && strings.IndexByte(",;:!?|()<", text[k]) >= 0
	return nm
}

// sameLineEnd reports whether, after the key word ending at at, a comma
// and a name close the line ("Thanks, Anna"): a comma, then no other
// punctuation before the line ends, bar one mark ending it.
func sameLineEnd(text string, at int) bool {
	j := spaces(text, at, "")
	if j >= len(text) || text[j] != ',' {
		return false
	}
	for j++; j < len(text) && text[j] != '\n'; j++ {
		switch text[j] {
		case '.', ',', ':', ';', '?', '!':
			return j+1 == len(text) || text[j+1] == '\n' || text[j+1] == '\r'
		}
	}
	return true
}

// followedBy reports whether text continues at i with one of the strings.
func followedBy(text string, i int, ss ...string) bool {
	for _, s := range ss {
		if strings.HasPrefix(text[i:], s) {
			return true
		}
	}
	return false
}

// camel reports whether s has a capital after its first letter other than
// in a name's usual places: after '-' or an apostrophe, after Mc, Mac, De,
// Di, La, Le, Van, Von, Fitz ("McDonald", "DeVito"), or in a word in
// capitals. "CheckWebhookURL" and "API-key" are no names.
func camel(s string) bool {
	if allCaps(s) {
		return false
	}
	prev := rune(0)
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) && prev != '-' && prev != '\'' && prev != '’' {
			switch s[:i] {
			case "Mc", "Mac", "De", "Di", "Da", "La", "Le", "Van", "Von", "Fitz", "O", "D":
			default:
				return true
			}
		}
		prev = r
	}
	return false
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
		if !w.lineStart && !(s.prev.n > 0 && (s.prev.k() == "good" || s.prev.k() == "oh")) && !sameLineEnd(text, at) {
			return dst
		}
		nm = readName(text, skipTitle(text, spaces(text, at, ",")))
		if !nm.listed && !nm.punct {
			return dst
		}
		score, rule = 0.75, "person:greeting"
	case tIntro:
		nm = readName(text, at)
		score, rule = 0.8, "person:intro"
	case tIntroWeak:
		nm = readName(text, at)
		if !nm.listed && nm.words < 2 || nm.caps {
			return dst
		}
		score, rule = 0.7, "person:intro"
	case tLabel:
		colon := at < len(text) && text[at] == ':'
		if colon {
			at++
		} else if at >= len(text) || text[at] != ' ' || colonLabels[w.k()] {
			return dst
		}
		nm = readName(text, skipTitle(text, at))
		switch {
		case colon && (nm.words >= 2 || nm.listed && nm.lineEnd):
		case !colon && nm.words >= 2 && !nm.caps:
		default:
			return dst
		}
		score, rule = 0.75, "person:label"
	case tVerb:
		if s.prev.upper && s.prev.end > 0 && w.start-s.prev.end <= 1 && !sentenceStart(text, s.prev.start) {
			return dst // a heading in title case: "The Road by Cormac McCarthy"
		}
		nm = readName(text, skipTitle(text, at))
		// A listed first name; or a full name closed by punctuation or
		// followed by "at", "on"…; or one word followed by "at", "on",
		// "via" ("reach Siward at …"). Not "by Run and by Key".
		after := followedBy(text, nm.end, " at ", " on ", " via ", " who ", "'s ", "’s ")
		if nm.caps || !nm.listed && !(nm.words >= 2 && (nm.punct || after || followedBy(text, nm.end, " for ", " about ", " and "))) && !(nm.words == 1 && after) {
			return dst
		}
		score, rule = 0.7, "person:verb"
	case tValediction:
		nm = signatureName(text, at)
		if nm.words == 0 && followedBy(text, spaces(text, at, ""), ",") {
			// "Thanks, Anna" closing the text or its line, "Kind regards,
			// Anna Weber, Head of Finance".
			nm = readName(text, spaces(text, at, ","))
			if nm.caps || !nm.punct || nm.words < 2 && !nm.lineEnd {
				return dst
			}
		}
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

// colonLabels are labels that announce a name only before a colon
// ("To: Anna Weber", not "to San Francisco").
var colonLabels = map[string]bool{"to": true, "from": true, "cc": true, "attn": true, "attention": true,
	"signed": true, "user": true, "owner": true, "member": true, "author": true, "name": true,
	"nombre": true, "nom": true, "vorname": true, "nachname": true, "prénom": true, "apellido": true,
	"surname": true, "record": true, "lead": true, "guest": true, "sender": true, "recipient": true,
	"manager": true, "reporter": true, "student": true}

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
	if triggerOf(w.k()) != tTitle || !w.upper {
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
	if w.n == 0 || allCaps(text[w.start:w.end]) {
		return dst
	}
	if !listedName(w.k()) {
		nm := readName(text, w.start)
		if nm.start != w.start || nm.words < 2 || nm.caps {
			return dst
		}
		switch {
		case followedBy(text, nm.end, " who ", " whose ", " who's "):
			// "a reply to Edlin Vazquez who says …": a relative "who"
			// follows a person.
			if s.prev.upper && s.prev.end > 0 && w.start-s.prev.end <= 1 || s.titleCase(text) {
				return dst
			}
			s.personEnd = nm.end
			return append(dst, finding(detect.Person, nm.start, nm.end, 0.6, "person:who"))
		case w.lineStart && followedBy(text, nm.end, " |", " -", " –", ", ") && sigLine(text, nm.end):
			// A signature line: "Anna Weber | Head of Finance | +49 …".
			s.personEnd = nm.end
			return append(dst, finding(detect.Person, nm.start, nm.end, 0.65, "person:signature-line"))
		}
		return dst
	}
	// Inside a run of capitalised words (a title, a heading) it is no
	// name, unless that run is one word opening a sentence ("Yesterday
	// Anna Weber …").
	if s.prev.upper && s.prev.end > 0 && w.start-s.prev.end <= 1 &&
		(!sentenceStart(text, s.prev.start) || listedName(s.prev.k())) || s.titleCase(text) {
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

// titleCase reports whether the word two back is capitalised mid-sentence
// ("The Great Gatsby by Scott …"): the text around is a heading in title
// case, not prose.
func (s *wordScan) titleCase(text string) bool {
	p := s.prev2
	return p.upper && p.end > 0 && p.end-p.start > 1 && s.prev.start-p.end <= 1 && !sentenceStart(text, p.start)
}

// sentenceStart reports whether the word at i opens a sentence or a line:
// only spaces stand between it and the text's start, a line break or a
// sentence's final mark.
func sentenceStart(text string, i int) bool {
	for i > 0 && (text[i-1] == ' ' || text[i-1] == '\t') {
		i--
	}
	return i == 0 || strings.IndexByte(".!?\n\"(", text[i-1]) >= 0
}

// sigLine reports whether the rest of the line after a name at i reads
// like a signature: it holds a '|' or an e-mail or phone-like digits.
func sigLine(text string, i int) bool {
	end := strings.IndexByte(text[i:], '\n')
	if end < 0 {
		end = len(text) - i
	}
	line := text[i : i+end]
	return strings.Contains(line, "|") || strings.Contains(line, "@") || strings.Count(line, " ") < 6
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
