package quality

import (
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

func file(set, split string) string { return "testdata/" + set + "_" + split + ".jsonl" }

var splits = []string{SplitTune, SplitHeldOut}

// minPerType is the least number of entities a split holds of each type.
var minPerType = map[detect.Type]int{
	detect.Email: 150, detect.Phone: 150, detect.SSN: 150, detect.CreditCard: 150, detect.IBAN: 150,
	detect.IPAddress: 150, detect.Person: 150, detect.APIKey: 150, detect.AWSAccessKey: 150, detect.AWSSecretKey: 150,
	detect.PrivateKey: 50, detect.JWT: 50, detect.DatabaseURL: 50, detect.DateOfBirth: 50,
}

// TestSetSizes keeps the sets as large as the README promises, and the
// splits apart: no text is in both.
func TestSetSizes(t *testing.T) {
	texts := map[string]map[string]bool{}
	for _, sp := range splits {
		t.Run(sp, func(t *testing.T) {
			seen := map[string]bool{}
			texts[sp] = seen
			pii, err := LoadExamples(file("pii", sp))
			if err != nil {
				t.Fatal(err)
			}
			count := map[detect.Type]int{}
			for _, ex := range pii {
				seen[ex.Text] = true
				for _, e := range ex.Entities {
					count[e.Type]++
				}
			}
			for typ, want := range minPerType {
				if count[typ] < want {
					t.Errorf("%s: got %d entities, want at least %d", typ, count[typ], want)
				}
			}
			neg, err := LoadHardNegatives(file("hardneg", sp))
			if err != nil {
				t.Fatal(err)
			}
			if len(neg) < 300 {
				t.Errorf("got %d hard negatives, want at least 300", len(neg))
			}
			for _, h := range neg {
				seen[h.Text] = true
			}
			inj, err := LoadInjections(file("injection", sp))
			if err != nil {
				t.Fatal(err)
			}
			var benign, adjacent int
			langs := map[string]bool{}
			for _, r := range inj {
				seen[r.Text] = true
				langs[r.Lang] = true
				if !r.Positive() {
					benign++
					if r.Kind == "security_question" || r.Kind == "trigger_words" {
						adjacent++
					}
				}
			}
			if len(inj) < 300 || 3*benign < len(inj) || adjacent < 80 {
				t.Errorf("got %d injection rows, %d benign, %d security-adjacent; want >= 300, >= a third, >= 80", len(inj), benign, adjacent)
			}
			for _, l := range []string{"en", "de", "es", "fr"} {
				if !langs[l] {
					t.Errorf("no injection row in %q", l)
				}
			}
		})
	}
	for text := range texts[SplitHeldOut] {
		if texts[SplitTune][text] {
			t.Errorf("text in both splits: %q", text)
		}
	}
}

// TestEntityValues checks every labelled span: on UTF-8 boundaries, not
// empty, no surrounding space, and valid by its type's own rules, so a
// detector that validates is not punished for a bad label.
func TestEntityValues(t *testing.T) {
	for _, sp := range splits {
		pii, err := LoadExamples(file("pii", sp))
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range pii {
			for _, e := range ex.Entities {
				v := ex.Text[e.Start:e.End]
				if !utf8.ValidString(v) || strings.TrimSpace(v) != v || v == "" {
					t.Errorf("%s %s: span %q is empty, padded or cuts a character", sp, e.Type, v)
					continue
				}
				if err := validValue(e.Type, v); err != "" {
					t.Errorf("%s %s %q: %s (in %q)", sp, e.Type, v, err, ex.Text)
				}
			}
		}
	}
}

var (
	reAWSKey    = regexp.MustCompile(`^(AKIA|ASIA)[A-Z2-7]{16}$`)
	reAWSSecret = regexp.MustCompile(`^[A-Za-z0-9/+]{40}$`)
	reAPIKey    = regexp.MustCompile(`^(sk-proj-|sk-ant-api03-|sk-|ghp_|gho_|github_pat_|xoxb-|xoxp-|sk_live_|rk_live_|AIza|glpat-|hf_|SG\.|npm_)[A-Za-z0-9_\-.]{16,}$`)
	reYear      = regexp.MustCompile(`\b(19[4-9]\d|200\d)\b|/\d\d$`)
	// phoneRegions are the regions either split writes numbers of.
	phoneRegions = []string{"US", "GB", "DE", "FR", "ES", "IT", "NL", "IN", "BR", "AU", "JP", "CA", "MX", "SE", "PL", "CH", "AT", "BE", "IE", "ZA", "SG", "NZ", "KR", "AR", "PT", "NO", "DK", "FI", "HK", "AE"}
)

// validValue is why v is not a valid value of typ, "" when it is.
func validValue(typ detect.Type, v string) string {
	switch typ {
	case detect.CreditCard:
		d := digitsOf(v)
		if len(d) < 12 || len(d) > 19 || !luhn(d) {
			return "not 12–19 digits passing Luhn"
		}
	case detect.IBAN:
		if !ibanOK(strings.ReplaceAll(v, " ", "")) {
			return "fails mod-97"
		}
	case detect.SSN:
		d := digitsOf(v)
		if len(d) != 9 || d[:3] == "000" || d[:3] == "666" || d[0] == '9' || d[3:5] == "00" || d[5:] == "0000" {
			return "breaks the area/group/serial rules"
		}
	case detect.Email:
		if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
			return "not an address"
		}
	case detect.IPAddress:
		if _, err := netip.ParseAddr(v); err != nil {
			return err.Error()
		}
	case detect.Phone:
		for _, region := range phoneRegions {
			if n, err := phonenumbers.Parse(v, region); err == nil && phonenumbers.IsValidNumber(n) {
				return ""
			}
		}
		return "valid in no region"
	case detect.AWSAccessKey:
		if !reAWSKey.MatchString(v) {
			return "not AKIA/ASIA + 16"
		}
	case detect.AWSSecretKey:
		if !reAWSSecret.MatchString(v) {
			return "not 40 characters of the secret's alphabet"
		}
	case detect.APIKey:
		if !reAPIKey.MatchString(v) {
			return "no known provider shape"
		}
	case detect.JWT:
		parts := strings.Split(v, ".")
		if len(parts) != 3 {
			return "not three segments"
		}
		h, err := base64.RawURLEncoding.DecodeString(parts[0])
		var hdr map[string]any
		if err != nil || json.Unmarshal(h, &hdr) != nil || hdr["alg"] == nil {
			return "header is not base64url JSON with alg"
		}
	case detect.PrivateKey:
		if !strings.HasPrefix(v, "-----BEGIN ") || !strings.HasSuffix(v, "PRIVATE KEY-----") {
			return "not a PEM private-key block"
		}
	case detect.DatabaseURL:
		u, err := url.Parse(v)
		if err != nil || u.User == nil {
			return "not a URL with credentials"
		}
		if _, ok := u.User.Password(); !ok {
			return "no password"
		}
	case detect.DateOfBirth:
		if !reYear.MatchString(v) {
			return "no birth year"
		}
	case detect.Person:
		for _, r := range v {
			if !(r == ' ' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
				return "not a name"
			}
		}
	default:
		return "unknown type"
	}
	return ""
}

func digitsOf(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= '0' && c <= '9' {
			b.WriteRune(c)
		}
	}
	return b.String()
}

func luhn(d string) bool {
	sum := 0
	for i := range len(d) {
		n := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			if n *= 2; n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return sum%10 == 0
}

func ibanOK(s string) bool {
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	var num strings.Builder
	for _, c := range s[4:] + s[:4] {
		switch {
		case c >= '0' && c <= '9':
			num.WriteRune(c)
		case c >= 'A' && c <= 'Z':
			num.WriteString(big.NewInt(int64(c-'A') + 10).String())
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(num.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

var (
	reCardish = regexp.MustCompile(`\d(?:[ -]?\d){11,18}`)
	reIBANish = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b`)
	reSSNish  = regexp.MustCompile(`\b\d{3}[- ]\d{2}[- ]\d{4}\b`)
	reEmail   = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
)

// cardPrefixes are the IIN prefixes of the brands the sets use; an IMEI
// (Luhn-valid, 15 digits, TAC 35…/86…/01…/99…) matches none at its length.
var cardPrefixes = map[int][]string{
	13: {"4"}, 14: {"36", "300", "305", "38"}, 15: {"34", "37"},
	16: {"4", "5", "2", "6011", "65", "644", "649", "3528", "3540", "3566", "3589", "62", "5018", "5020", "6304", "6759"},
	19: {"62", "5018", "5020", "6304", "6759"},
}

// holdsValue names a valid card, IBAN, SSN or e-mail address in s, "" if
// none; the hard negatives must hold none, nor the unlabelled parts of the
// PII texts.
func holdsValue(s string) string {
	for _, m := range reCardish.FindAllString(s, -1) {
		d := digitsOf(m)
		for _, p := range cardPrefixes[len(d)] {
			if strings.HasPrefix(d, p) && luhn(d) {
				return "card " + m
			}
		}
	}
	for _, m := range reIBANish.FindAllString(s, -1) {
		if c := strings.ReplaceAll(m, " ", ""); ibanOK(c) {
			return "IBAN " + m
		}
	}
	for _, m := range reSSNish.FindAllString(s, -1) {
		if validValue(detect.SSN, m) == "" {
			return "SSN " + m
		}
	}
	if m := reEmail.FindString(s); m != "" {
		return "email " + m
	}
	return ""
}

// TestNegativesHoldNoValue: the hard negatives hold no valid value, and
// every valid value of a PII text is labelled.
func TestNegativesHoldNoValue(t *testing.T) {
	for _, sp := range splits {
		neg, err := LoadHardNegatives(file("hardneg", sp))
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range neg {
			if v := holdsValue(h.Text); v != "" {
				t.Errorf("%s hard negative %q holds a %s", sp, h.Text, v)
			}
		}
		pii, err := LoadExamples(file("pii", sp))
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range pii {
			// blank the labelled spans, keeping the offsets.
			b := []byte(ex.Text)
			for _, e := range ex.Entities {
				for i := e.Start; i < e.End; i++ {
					b[i] = '\n'
				}
			}
			if v := holdsValue(string(b)); v != "" {
				t.Errorf("%s: unlabelled %s in %q", sp, v, ex.Text)
			}
		}
	}
}

// TestPublicSet keeps the public set's splits apart and of a size worth
// measuring, each row naming the repository and file it was taken from.
func TestPublicSet(t *testing.T) {
	texts := map[string]string{}
	for _, sp := range splits {
		rows, err := LoadInjections(file(PublicSet, sp))
		if err != nil {
			t.Fatal(err)
		}
		var attacks, benign int
		for _, r := range rows {
			if r.Positive() {
				attacks++
			} else {
				benign++
			}
			if repo, _, ok := strings.Cut(r.Source, ":"); !ok || strings.Count(repo, "/") != 1 {
				t.Errorf("%s: source %q, want owner/repo:path", sp, r.Source)
			}
			if other, ok := texts[r.Text]; ok && other != sp {
				t.Errorf("text in both splits: %.60q", r.Text)
			}
			texts[r.Text] = sp
		}
		if attacks < 20 || benign < 50 {
			t.Errorf("%s: %d attacks and %d benign rows, want >= 20 and >= 50", sp, attacks, benign)
		}
	}
}

// TestFreshSet keeps the fresh held-out set of a size worth measuring, in
// four languages, attacks and benign security-adjacent rows in each, every
// row naming the file and case it was taken from, and no text of it in any
// other set.
func TestFreshSet(t *testing.T) {
	rows, err := LoadInjections(file(FreshSet, SplitHeldOut))
	if err != nil {
		t.Fatal(err)
	}
	adjacent := map[string]bool{}
	for _, k := range SecurityAdjacentKinds {
		adjacent[k] = true
	}
	type count struct{ attacks, adjacent, ordinary int }
	byLang := map[string]*count{}
	var total count
	texts := map[string]bool{}
	for _, r := range rows {
		c := byLang[r.Lang]
		if c == nil {
			c = &count{}
			byLang[r.Lang] = c
		}
		switch {
		case r.Positive():
			c.attacks++
			total.attacks++
		case adjacent[r.Kind]:
			c.adjacent++
			total.adjacent++
		default:
			c.ordinary++
			total.ordinary++
		}
		if !strings.HasPrefix(r.Source, "meta-llama/PurpleLlama:CybersecurityBenchmarks/datasets/") || !strings.Contains(r.Source, ".json#") {
			t.Errorf("source %q, want meta-llama/PurpleLlama:<path>.json#<index>", r.Source)
		}
		texts[r.Text] = true
	}
	if total.attacks < 300 || total.adjacent < 300 {
		t.Errorf("%d attacks and %d benign security-adjacent rows, want >= 300 each", total.attacks, total.adjacent)
	}
	for _, lang := range []string{"en", "de", "es", "fr"} {
		if c := byLang[lang]; c == nil || c.attacks < 20 || c.adjacent < 20 {
			t.Errorf("%s: %+v, want >= 20 attacks and 20 security-adjacent rows", lang, c)
		}
	}
	for _, sp := range splits {
		for _, set := range []string{"injection", PublicSet} {
			other, err := LoadInjections(file(set, sp))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range other {
				if texts[r.Text] {
					t.Errorf("a text of %s_%s.jsonl is in the fresh set", set, sp)
				}
			}
		}
	}
}
