package pii

import (
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// Phones are found in two steps: the numeric pass proposes windows of
// digit groups that are shaped like a phone number (8–15 digits after a
// '+' or "00", 10–11 for a national number, separators of phone numbers),
// then nyaruka/phonenumbers (a port of libphonenumber) parses and
// validates each. A national number (no '+') is read in the region a
// context word names ("UK", "London", "Deutschland"…), else in the region
// of a '+' number validated earlier in the same text, else as a US
// number. A number that does not validate, but is written exactly like a
// North American one ("(555) 123-4567", "555-123-4567") is still
// reported, with a lower score: such numbers are common in text, and
// libphonenumber rejects unassigned area codes.
//
// Validation costs microseconds and allocates, so each text has a budget
// of library calls (phoneBudget); beyond it only the North American shape
// counts.

var (
	phoneWords = newWordSet("phone", "phones", "tel", "telephone", "call", "called", "calling", "mobile",
		"cell", "cellphone", "fax", "contact", "reach", "text me", "texted", "sms", "whatsapp", "signal", "dial",
		"ring", "hotline", "ph", "mob", "landline", "telefon", "telefonnummer", "handy", "mobil",
		"téléphone", "portable", "teléfono", "móvil", "celular", "tél", "voicemail", "extension",
		"ext", "direct", "office", "call back", "callback")
	// Words right before a number that name it as something else: they
	// win over phone words.
	idWords = newWordSet("order", "invoice", "inv", "tracking", "ref", "reference", "serial", "sn",
		"sku", "isbn", "imei", "meid", "version", "ver", "build", "part", "pn", "model", "item",
		"catalog", "ticket", "case", "transaction", "txn", "receipt", "confirmation", "booking",
		"policy", "claim", "mrn", "zip", "postcode", "page", "pages", "pp", "timestamp", "epoch",
		"port", "pid", "uid", "gid", "checksum", "hash", "ssn", "social security", "routing",
		"iban", "bic", "swift", "account number", "acct", "id")
)

var isbnWords = newWordSet("isbn", "isbn-10", "isbn-13")

// regionHints maps words near a national number to the region it is read
// in.
var regionHints = []struct {
	words  []string
	region string
}{
	{[]string{"uk", "u.k.", "united kingdom", "britain", "british", "england", "london", "scotland", "wales", "manchester"}, "GB"},
	{[]string{"germany", "deutschland", "german", "berlin", "münchen", "munich", "hamburg", "frankfurt", "köln", "cologne"}, "DE"},
	{[]string{"france", "french", "paris", "lyon", "marseille"}, "FR"},
	{[]string{"spain", "españa", "spanish", "madrid", "barcelona"}, "ES"},
	{[]string{"italy", "italia", "italian", "rome", "roma", "milan", "milano"}, "IT"},
	{[]string{"netherlands", "holland", "nederland", "dutch", "amsterdam", "rotterdam"}, "NL"},
	{[]string{"austria", "österreich", "wien", "vienna"}, "AT"},
	{[]string{"switzerland", "schweiz", "suisse", "swiss", "zürich", "zurich", "geneva", "genève"}, "CH"},
	{[]string{"ireland", "irish", "dublin"}, "IE"},
	{[]string{"india", "indian", "mumbai", "delhi", "bangalore", "bengaluru"}, "IN"},
	{[]string{"australia", "australian", "sydney", "melbourne"}, "AU"},
	{[]string{"brazil", "brasil", "são paulo"}, "BR"},
	{[]string{"mexico", "méxico"}, "MX"},
	{[]string{"japan", "tokyo"}, "JP"},
	{[]string{"canada", "canadian", "toronto", "vancouver", "montreal"}, "CA"},
}

// Regions a national number that is not North American is tried in, when
// it is written like a phone number or a phone word is near: with a trunk
// prefix 0, and without one.
var (
	trunkRegions   = []string{"GB", "DE", "FR", "IT", "NL", "AT", "CH", "BE"}
	noTrunkRegions = []string{"ES", "IT", "PL", "PT"}
)

// phoneState is what the phone detector carries from one run of a text to
// the next.
type phoneState struct {
	budget int    // library validations left
	buf    []byte // digits handed to the metadata's patterns (they escape)
	effort int    // windows left to weigh (context words, shapes)
	region string // region of the last '+' number validated, "" if none
}

// scratch returns a 40-byte buffer for one number's digits, allocated once
// per text (the patterns' matcher keeps its input on the heap).
func (ph *phoneState) scratch() []byte {
	if ph.buf == nil {
		ph.buf = make([]byte, 40)
	}
	return ph.buf[:40]
}

// phoneBudget is the number of library validations allowed for a text of n
// bytes: enough for the phones of any real text, bounded for adversarial
// input (a megabyte of phone-shaped numbers: about 4,000 checks, 80 ms).
func phoneBudget(n int) int { return 48 + n/256 }

// phoneEffort is the number of candidate windows weighed for a text of n
// bytes (each costs a look at the words around it, about a microsecond).
func phoneEffort(n int) int { return 256 + n/16 }

// phonesInRun finds phone numbers among the groups of r.
func phonesInRun(text string, r *numRun, ph *phoneState, dst []detect.Finding) []detect.Finding {
	for i := 0; i < r.n; i++ {
		if r.g[i].date || r.g[i].used {
			continue
		}
		// The longest window of at most 15 digits first, up to a date or
		// a group used by another detector.
		last, nd := i, 0
		for j := i; j < r.n && !r.g[j].date && !r.g[j].used; j++ {
			nd += r.g[j].end - r.g[j].start
			if nd > 15 {
				break
			}
			last = j
		}
		for j := last; j >= i; j-- {
			f, ok := phoneWindow(text, r, i, j, ph)
			if ok {
				dst = append(dst, f)
				i = j
				break
			}
		}
	}
	return dst
}

// phoneWindow checks groups i..j of r as one phone number.
func phoneWindow(text string, r *numRun, i, j int, ph *phoneState) (detect.Finding, bool) {
	nd := r.digits(i, j)
	plus := i == 0 && r.plus
	first := text[r.g[i].start:r.g[i].end]
	intl := plus || i != j && (first == "00" || first == "011" || strings.HasPrefix(first, "00") && nd >= 10)
	switch {
	case intl && (nd < 8 || nd > 15):
		return detect.Finding{}, false
	case !intl && (nd < 9 || nd > 13):
		return detect.Finding{}, false
	}
	if r.glued(i, j) || ph.effort <= 0 {
		return detect.Finding{}, false
	}
	ph.effort--
	// A window inside a longer chain joined by single dashes or dots is a
	// piece of something else (an ISBN, a part number, an outline number).
	if i > 0 && chainSep(r.sep(text, i)) || j+1 < r.n && chainSep(r.sep(text, j+1)) {
		return detect.Finding{}, false
	}
	start, end := r.g[i].start, r.g[j].end
	if i == 0 {
		start = r.start
	} else if s := r.sep(text, i); strings.HasSuffix(s, "(") {
		start = r.g[i].start - 1
	}
	if j == r.n-1 {
		if isExtension(text, end) {
			end = extensionEnd(text, end)
		} else if end+1 < len(text) && text[end] == ' ' && isExtension(text, end+1) {
			end = extensionEnd(text, end+1)
		}
	}
	bare := i == j && !plus
	// Four groups joined by dots and no '+' are a version (Chrome
	// 120.0.6099.109) when they are no address.
	if !intl && j-i == 3 && r.sep(text, i+1) == "." && r.sep(text, i+2) == "." && r.sep(text, i+3) == "." {
		return detect.Finding{}, false
	}
	// A national number in groups opens with at most five digits (a
	// trunk prefix and an area code): "52428800 (50" is no phone.
	if !intl && !bare && r.g[i].end-r.g[i].start > 5 {
		return detect.Finding{}, false
	}
	context := near(text, start, end, 64, phoneWords)
	if bare && !context {
		return detect.Finding{}, false
	}
	// An ID word just before the number names it, unless a phone word is
	// nearer still ("SSN 123-45-6789, phone (201) 555-0100").
	if before(text, start, 24, idWords) && !before(text, start, 12, phoneWords) || isISBN(text, r, i, j) {
		return detect.Finding{}, false
	}
	nanp := nanpShape(text, r, i, j)
	valid, region, foreign, unchecked := false, "", false, false
	if ph.budget <= 0 && intl {
		// Past the budget an international number with a known calling
		// code and a plausible length still counts, unvalidated.
		var buf [32]byte
		d := windowDigits(text, r, i, j, buf[:])
		if plus {
			_, nsn, known := splitCC(d)
			unchecked = known && len(nsn) >= 6 && len(nsn) <= 12
		}
	}
	if ph.budget > 0 {
		valid, region = validPhone(text, r, i, j, intl, ph, start, end)
		if !valid && !intl && !nanp && !bare && (context || spacedShape(text, r, i, j)) {
			valid, region = validAbroad(text, r, i, j, ph)
			foreign = valid
		}
	}
	var score float64
	var rule string
	switch {
	case valid && intl:
		score, rule = 0.9, "phone:e164"
		ph.region = region
	case foreign:
		score, rule = 0.7, "phone:national-eu"
	case unchecked:
		score, rule = 0.6, "phone:e164-unchecked"
	case valid:
		score, rule = 0.85, "phone:national"
	case nanp:
		score, rule = 0.55, "phone:nanp-shape"
		if context {
			score = 0.75
		}
	default:
		return detect.Finding{}, false
	}
	if context {
		score += 0.09
	}
	return finding(detect.Phone, start, end, score, rule), true
}

// chainSep reports whether s joins groups into a chain that a phone number
// is not a piece of: a single dash or dot.
func chainSep(s string) bool { return s == "-" || s == "." }

func extensionEnd(text string, i int) int {
	for i < len(text) && !isDigit(text[i]) {
		i++
	}
	for i < len(text) && isDigit(text[i]) {
		i++
	}
	return i
}

// validPhone validates groups i..j of r as a phone number and returns
// the region it belongs to. An international number (after '+', "00" or
// "011") and a North American one are split into calling code and
// national number directly; a national number of another region is parsed
// by phonenumbers (trunk prefixes differ by region). Each check spends one
// unit of ph's budget.
func validPhone(text string, r *numRun, i, j int, intl bool, ph *phoneState, start, end int) (ok bool, region string) {
	defer func() {
		if recover() != nil {
			ok, region = false, ""
		}
	}()
	spend := func() bool {
		if ph.budget <= 0 {
			return false
		}
		ph.budget--
		return true
	}
	d := windowDigits(text, r, i, j, ph.scratch())
	if intl {
		switch {
		case i == 0 && r.plus:
		case len(d) > 3 && string(d[:3]) == "011":
			d = d[3:]
		case len(d) > 2 && string(d[:2]) == "00":
			d = d[2:]
		}
		cc, nsn, known := splitCC(d)
		if !known || !spend() {
			return false, ""
		}
		if reg, ok := validNSN(cc, nsn); ok {
			return true, reg
		}
		if len(nsn) > 1 && nsn[0] == '0' {
			reg, ok := validNSN(cc, nsn[1:]) // +44 (0)20 …
			return ok, reg
		}
		return false, ""
	}
	// North American numbers first: ten digits (after a 1), area code
	// and exchange from 2. A number with a trunk prefix 0 is none.
	if nsn, ok := nanpNSN(d); ok && spend() {
		if reg, ok := validNSN(1, nsn); ok {
			return true, reg
		}
	}
	raw := text[r.g[i].start:r.g[j].end]
	hint := regionHint(text, start, end)
	if hint != "" && hint != "US" && spend() {
		if reg, ok := validParsed(raw, hint, ph.scratch()); ok {
			return true, reg
		}
	}
	if ph.region != "" && ph.region != "US" && ph.region != hint && i != j && spend() {
		reg, ok := validParsed(raw, ph.region, ph.scratch())
		return ok, reg
	}
	return false, ""
}

// windowDigits copies the digits of groups i..j of r into buf and returns
// them (at most len(buf)).
func windowDigits(text string, r *numRun, i, j int, buf []byte) []byte {
	n := 0
	for k := i; k <= j && n < len(buf); k++ {
		n += copy(buf[n:], text[r.g[k].start:r.g[k].end])
	}
	return buf[:n]
}

// nanpNSN returns the ten-digit national number of a North American
// number: ten digits, or eleven starting with 1, the area code and the
// exchange starting with 2–9.
func nanpNSN(d []byte) ([]byte, bool) {
	if len(d) == 11 && d[0] == '1' {
		d = d[1:]
	}
	return d, len(d) == 10 && d[0] >= '2' && d[3] >= '2'
}

// validAbroad tries a national number in the regions of trunkRegions or
// noTrunkRegions, while the budget lasts.
func validAbroad(text string, r *numRun, i, j int, ph *phoneState) (ok bool, region string) {
	defer func() {
		if recover() != nil {
			ok, region = false, ""
		}
	}()
	raw := text[r.g[i].start:r.g[j].end]
	regions := noTrunkRegions
	if raw[0] == '0' {
		regions = trunkRegions
	}
	for _, reg := range regions {
		if ph.budget <= 0 {
			break
		}
		ph.budget--
		if got, ok := validParsed(raw, reg, ph.scratch()); ok {
			return true, got
		}
	}
	return false, ""
}

// validParsed parses raw as a national number of region with phonenumbers
// (which strips the region's trunk prefix) and validates it.
func validParsed(raw, region string, buf []byte) (string, bool) {
	n, err := phonenumbers.Parse(raw, region)
	if err != nil || n.GetCountryCode() == 0 {
		return "", false
	}
	nsn := buf[:0]
	if n.GetItalianLeadingZero() {
		for z := min(max(int(n.GetNumberOfLeadingZeros()), 1), 16); z > 0; z-- {
			nsn = append(nsn, '0')
		}
	}
	nsn = strconv.AppendUint(nsn, n.GetNationalNumber(), 10)
	return validNSN(int(n.GetCountryCode()), nsn)
}

// callingCodes are the country calling codes phonenumbers knows.
var callingCodes = func() (set [1000]bool) {
	for cc := range phonenumbers.GetSupportedCallingCodes() {
		if cc > 0 && cc < len(set) {
			set[cc] = true
		}
	}
	return set
}()

// spacedShape reports whether groups i..j of r are written like a
// European national number: joined by single spaces (or dots), either
// with a trunk prefix 0 and groups of at most 8 digits, or in four or more
// groups of two or three digits with at least one pair (not a number
// grouped in thousands).
func spacedShape(text string, r *numRun, i, j int) bool {
	if j == i {
		return false
	}
	sep := r.sep(text, i+1)
	if sep != " " && sep != "." {
		return false
	}
	pair := false
	for k := i; k <= j; k++ {
		if k > i && r.sep(text, k) != sep {
			return false
		}
		l := r.g[k].end - r.g[k].start
		if l > 8 {
			return false
		}
		if l == 2 {
			pair = true
		}
	}
	if text[r.g[i].start] == '0' {
		return true
	}
	if j-i < 3 || !pair {
		return false
	}
	for k := i; k <= j; k++ {
		if l := r.g[k].end - r.g[k].start; l < 2 || l > 3 {
			return false
		}
	}
	return true
}

// regionWords indexes the words of regionHints, regionOf maps each to
// its region.
var regionWords, regionOf = func() (*wordSet, map[string]string) {
	var all []string
	of := map[string]string{}
	for _, h := range regionHints {
		for _, w := range h.words {
			all = append(all, w)
			of[w] = h.region
		}
	}
	return newWordSet(all...), of
}()

// regionHint returns the region a word near text[start:end] names, "" if
// none does.
func regionHint(text string, start, end int) string {
	return regionOf[nearWord(text, start, end, 80, regionWords)]
}

// nanpShape reports whether groups i..j of r are written like a North
// American number: 3-3-4 digits (after an optional 1 or +1), the area code
// and exchange not starting with 0 or 1, joined by phone separators.
func nanpShape(text string, r *numRun, i, j int) bool {
	l := func(k int) int { return r.g[k].end - r.g[k].start }
	k := i
	if j-i == 3 && l(i) == 1 && text[r.g[i].start] == '1' {
		k++
	}
	if j-k != 2 || l(k) != 3 || l(k+1) != 3 || l(k+2) != 4 {
		return false
	}
	if c := text[r.g[k].start]; c < '2' {
		return false
	}
	if c := text[r.g[k+1].start]; c < '2' {
		return false
	}
	s1, s2 := r.sep(text, k+1), r.sep(text, k+2)
	switch s1 {
	case "-", ".", " ", ") ", ")":
	default:
		return false
	}
	switch s2 {
	case "-", ".", " ":
	default:
		return false
	}
	if s1 == ") " || s1 == ")" {
		// "(415) 555-0100": the area code opens with '('.
		open := r.g[k].start - 1
		return open >= 0 && text[open] == '('
	}
	return true
}

// isISBN reports whether groups i..j of r are an ISBN: 13 digits starting
// 978 or 979, or 10 digits in four dashed groups passing the ISBN-10
// check, or any number after the word "ISBN".
func isISBN(text string, r *numRun, i, j int) bool {
	nd := r.digits(i, j)
	if nd != 10 && nd != 13 {
		return false
	}
	if before(text, r.g[i].start, 16, isbnWords) {
		return true
	}
	var d [13]byte
	n := 0
	for k := i; k <= j; k++ {
		n += copy(d[n:], text[r.g[k].start:r.g[k].end])
	}
	if nd == 13 {
		p := string(d[:3])
		return (p == "978" || p == "979") && j-i >= 3
	}
	if j-i != 3 {
		return false
	}
	sum := 0
	for k := 0; k < 10; k++ {
		sum += (10 - k) * int(d[k]-'0')
	}
	return sum%11 == 0
}
