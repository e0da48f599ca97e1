package main

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// Character sets of generated values.
const (
	digits    = "0123456789"
	upper     = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower     = "abcdefghijklmnopqrstuvwxyz"
	alnum     = upper + lower + digits
	upperNum  = upper + digits
	lowerNum  = lower + digits
	hexLower  = "0123456789abcdef"
	base32AWS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64chars  = alnum + "+/"
	b64url    = alnum + "-_"
)

// pick is a random element of xs.
func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// randStr is n random characters of set.
func randStr(r *rand.Rand, set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

// luhnDigit is the check digit that makes payload+digit pass Luhn.
func luhnDigit(payload string) byte {
	sum := 0
	double := true // the check digit will be appended to the right
	for i := len(payload) - 1; i >= 0; i-- {
		d := int(payload[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return byte('0' + (10-sum%10)%10)
}

// luhnValid reports whether the digits of s pass Luhn.
func luhnValid(s string) bool {
	if len(s) < 2 {
		return false
	}
	return luhnDigit(s[:len(s)-1]) == s[len(s)-1]
}

// A brand is a card scheme: its IIN prefixes, lengths and grouping.
type brand struct {
	name     string
	prefixes []string
	lengths  []int
	groups   map[int][]int // digit groups by length, when not 4-4-4-4…
}

var brands = map[string]brand{
	"visa":       {name: "visa", prefixes: []string{"4"}, lengths: []int{16}},
	"visa13":     {name: "visa", prefixes: []string{"4"}, lengths: []int{13}, groups: map[int][]int{13: {4, 3, 3, 3}}},
	"mastercard": {name: "mastercard", prefixes: []string{"51", "52", "53", "54", "55", "2221", "2300", "2500", "2720"}, lengths: []int{16}},
	"amex":       {name: "amex", prefixes: []string{"34", "37"}, lengths: []int{15}, groups: map[int][]int{15: {4, 6, 5}}},
	"discover":   {name: "discover", prefixes: []string{"6011", "65", "644", "649"}, lengths: []int{16}},
	"jcb":        {name: "jcb", prefixes: []string{"3528", "3540", "3566", "3589"}, lengths: []int{16}},
	"diners":     {name: "diners", prefixes: []string{"36", "300", "305", "38"}, lengths: []int{14}, groups: map[int][]int{14: {4, 6, 4}}},
	"unionpay":   {name: "unionpay", prefixes: []string{"62"}, lengths: []int{16, 19}, groups: map[int][]int{19: {4, 4, 4, 4, 3}}},
	"maestro":    {name: "maestro", prefixes: []string{"5018", "5020", "6304", "6759"}, lengths: []int{16, 19}, groups: map[int][]int{19: {4, 4, 4, 4, 3}}},
}

// cardNumber is a Luhn-valid number of the brand, its digits grouped with
// sep ("" for none).
func cardNumber(r *rand.Rand, b brand, sep string) string {
	n := pick(r, b.lengths)
	p := pick(r, b.prefixes)
	payload := p + randStr(r, digits, n-len(p)-1)
	num := payload + string(luhnDigit(payload))
	return group(num, groupsOf(b, n), sep)
}

func groupsOf(b brand, n int) []int {
	if g, ok := b.groups[n]; ok {
		return g
	}
	var g []int
	for left := n; left > 0; left -= 4 {
		g = append(g, min(4, left))
	}
	return g
}

// group splits s into groups of the given sizes joined by sep.
func group(s string, sizes []int, sep string) string {
	if sep == "" {
		return s
	}
	var parts []string
	at := 0
	for _, n := range sizes {
		if at+n > len(s) {
			break
		}
		parts = append(parts, s[at:at+n])
		at += n
	}
	if at < len(s) {
		parts = append(parts, s[at:])
	}
	return strings.Join(parts, sep)
}

// ibanFormats is each country's BBAN structure, as in the SWIFT IBAN
// registry: runs of a count and a class (n digits, a upper-case letters, c
// letters or digits).
var ibanFormats = map[string]string{
	"AD": "4n4n12c", "AE": "3n16n", "AL": "8n16c", "AT": "5n11n", "AZ": "4a20c", "BA": "3n3n8n2n",
	"BE": "3n7n2n", "BG": "4a4n2n8c", "BH": "4a14c", "BR": "8n5n10n1a1c", "CH": "5n12c", "CR": "4n14n",
	"CY": "3n5n16c", "CZ": "4n6n10n", "DE": "8n10n", "DK": "4n9n1n", "DO": "4c20n", "EE": "2n2n11n1n",
	"ES": "4n4n1n1n10n", "FI": "6n7n1n", "FR": "5n5n11c2n", "GB": "4a6n8n", "GE": "2a16n", "GI": "4a15c",
	"GR": "3n4n16c", "GT": "4c20c", "HR": "7n10n", "HU": "3n4n1n15n1n", "IE": "4a6n8n", "IL": "3n3n13n",
	"IS": "4n2n6n10n", "IT": "1a5n5n12c", "JO": "4a4n18c", "KW": "4a22c", "KZ": "3n13c", "LB": "4n20c",
	"LI": "5n12c", "LT": "5n11n", "LU": "3n13c", "LV": "4a13c", "MC": "5n5n11c2n", "MD": "2c18c",
	"ME": "3n13n2n", "MK": "3n10c2n", "MR": "5n5n11n2n", "MT": "4a5n18c", "MU": "4a2n2n12n3n3a", "NL": "4a10n",
	"NO": "4n6n1n", "PK": "4a16c", "PL": "8n16n", "PS": "4a21c", "PT": "4n4n11n2n", "QA": "4a21c",
	"RO": "4a16c", "RS": "3n13n2n", "SA": "2n18c", "SE": "3n16n1n", "SI": "5n8n2n", "SK": "4n6n10n",
	"SM": "1a5n5n12c", "TN": "2n3n13n2n", "TR": "5n1n16c", "UA": "6n19c", "VG": "4a16n", "XK": "4n10n2n",
}

// bban is a random BBAN of country's structure; c positions are letters
// with probability 1/4.
func bban(r *rand.Rand, country string) string {
	f := ibanFormats[country]
	var b strings.Builder
	for f != "" {
		i := strings.IndexAny(f, "nac")
		n, _ := strconv.Atoi(f[:i])
		for range n {
			switch f[i] {
			case 'n':
				b.WriteByte(digits[r.IntN(10)])
			case 'a':
				b.WriteByte(upper[r.IntN(26)])
			default:
				if r.IntN(4) == 0 {
					b.WriteByte(upper[r.IntN(26)])
				} else {
					b.WriteByte(digits[r.IntN(10)])
				}
			}
		}
		f = f[i+1:]
	}
	return b.String()
}

// ibanCheck is the two check digits of country+bban by ISO 13616 (mod 97).
func ibanCheck(country, bban string) string {
	rearranged := bban + country + "00"
	var num strings.Builder
	for _, c := range rearranged {
		if c >= 'A' && c <= 'Z' {
			num.WriteString(strconv.Itoa(int(c-'A') + 10))
		} else {
			num.WriteRune(c)
		}
	}
	n, _ := new(big.Int).SetString(num.String(), 10)
	m := new(big.Int).Mod(n, big.NewInt(97)).Int64()
	return fmt.Sprintf("%02d", 98-m)
}

// ibanValid reports whether the compact iban passes mod-97.
func ibanValid(iban string) bool {
	if len(iban) < 5 {
		return false
	}
	return ibanCheck(iban[:2], iban[4:]) == iban[2:4]
}

// iban is a valid IBAN of country, compact or in groups of four (print).
func iban(r *rand.Rand, country string, print bool) string {
	b := bban(r, country)
	s := country + ibanCheck(country, b) + b
	if print {
		return group(s, fours(len(s)), " ")
	}
	return s
}

func fours(n int) []int {
	var g []int
	for ; n > 0; n -= 4 {
		g = append(g, min(4, n))
	}
	return g
}

// ssn is a valid US SSN (area 001–899 but 666, group 01–99, serial
// 0001–9999) with sep between its parts.
func ssn(r *rand.Rand, sep string) string {
	area := 1 + r.IntN(899)
	for area == 666 {
		area = 1 + r.IntN(899)
	}
	return fmt.Sprintf("%03d%s%02d%s%04d", area, sep, 1+r.IntN(99), sep, 1+r.IntN(9999))
}

// phone is a valid number of region by libphonenumber, formatted as format;
// it starts from the region's example number and randomises its last
// digits.
func phone(r *rand.Rand, region string, format phonenumbers.PhoneNumberFormat, mobile bool) string {
	typ := phonenumbers.FIXED_LINE
	if mobile {
		typ = phonenumbers.MOBILE
	}
	ex := phonenumbers.GetExampleNumberForType(region, typ)
	if ex == nil {
		ex = phonenumbers.GetExampleNumber(region)
	}
	nsn := phonenumbers.GetNationalSignificantNumber(ex)
	for range 200 {
		k := min(len(nsn)-2, 4+r.IntN(3))
		cand := nsn[:len(nsn)-k] + randStr(r, digits, k)
		num, err := phonenumbers.Parse(cand, region)
		if err != nil || !phonenumbers.IsValidNumberForRegion(num, region) {
			continue
		}
		return phonenumbers.Format(num, format)
	}
	return phonenumbers.Format(ex, format)
}

// ipv4 is a random address outside 0/8, 127/8 and the multicast and
// reserved ranges.
func ipv4(r *rand.Rand) string {
	first := 1 + r.IntN(223)
	for first == 127 || first == 10 && r.IntN(2) == 0 {
		first = 1 + r.IntN(223)
	}
	return fmt.Sprintf("%d.%d.%d.%d", first, r.IntN(256), r.IntN(256), 1+r.IntN(254))
}

// ipv4Private is an address of an RFC 1918 range.
func ipv4Private(r *rand.Rand) string {
	switch r.IntN(3) {
	case 0:
		return fmt.Sprintf("10.%d.%d.%d", r.IntN(256), r.IntN(256), 1+r.IntN(254))
	case 1:
		return fmt.Sprintf("172.%d.%d.%d", 16+r.IntN(16), r.IntN(256), 1+r.IntN(254))
	}
	return fmt.Sprintf("192.168.%d.%d", r.IntN(256), 1+r.IntN(254))
}

// ipv6 is a global unicast address; compressed drops a run of zero groups
// ("::") and leading zeros, as RFC 5952 writes them.
func ipv6(r *rand.Rand, compressed bool) string {
	g := make([]uint16, 8)
	g[0] = uint16(0x2001 + r.IntN(0xd00))
	for i := 1; i < 8; i++ {
		g[i] = uint16(r.IntN(0x10000))
	}
	if !compressed {
		parts := make([]string, 8)
		for i, v := range g {
			parts[i] = fmt.Sprintf("%04x", v)
		}
		return strings.Join(parts, ":")
	}
	// zero a run of 2–4 groups in the middle, then write it as "::".
	start, n := 2+r.IntN(3), 2+r.IntN(3)
	if start+n > 7 {
		n = 7 - start
	}
	var head, tail []string
	for i := 0; i < start; i++ {
		head = append(head, strconv.FormatUint(uint64(g[i]), 16))
	}
	for i := start + n; i < 8; i++ {
		tail = append(tail, strconv.FormatUint(uint64(g[i]), 16))
	}
	return strings.Join(head, ":") + "::" + strings.Join(tail, ":")
}

// jwt is a token of three base64url segments: a real JSON header and
// claims, and a random signature.
func jwt(r *rand.Rand, sub string) string {
	enc := base64.RawURLEncoding
	alg := pick(r, []string{"HS256", "RS256", "ES256"})
	h := enc.EncodeToString([]byte(`{"alg":"` + alg + `","typ":"JWT"}`))
	p := enc.EncodeToString(fmt.Appendf(nil, `{"sub":"%s","iat":%d,"exp":%d,"scope":"%s"}`,
		sub, 1700000000+r.IntN(60000000), 1760000000+r.IntN(60000000), pick(r, []string{"read", "read write", "admin", "api"})))
	sigLen := 43
	if alg != "HS256" {
		sigLen = 86
	}
	return h + "." + p + "." + randStr(r, b64url, sigLen)
}

// privateKey is a PEM block of random base64 lines (no real key).
func privateKey(r *rand.Rand, kind string) string {
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "-----\n")
	lines := 4 + r.IntN(5)
	for i := range lines {
		n := 64
		if i == lines-1 {
			n = 12 + r.IntN(40)
		}
		b.WriteString(randStr(r, b64chars, n))
		b.WriteByte('\n')
	}
	b.WriteString("-----END " + kind + "-----")
	return b.String()
}

// apiKeys make random tokens in the shape of each provider's keys.
var apiKeys = map[string]func(r *rand.Rand) string{
	"openai": func(r *rand.Rand) string {
		return "sk-proj-" + randStr(r, alnum+"-_", 56) + "T3BlbkFJ" + randStr(r, alnum+"-_", 56)
	},
	"openai-legacy": func(r *rand.Rand) string { return "sk-" + randStr(r, alnum, 20) + "T3BlbkFJ" + randStr(r, alnum, 20) },
	"anthropic":     func(r *rand.Rand) string { return "sk-ant-api03-" + randStr(r, b64url, 93) + "AA" },
	"github":        func(r *rand.Rand) string { return "ghp_" + randStr(r, alnum, 36) },
	"github-oauth":  func(r *rand.Rand) string { return "gho_" + randStr(r, alnum, 36) },
	"github-fine": func(r *rand.Rand) string {
		return "github_pat_" + randStr(r, upperNum, 22) + "_" + randStr(r, alnum, 59)
	},
	"slack-bot": func(r *rand.Rand) string {
		return fmt.Sprintf("xoxb-%d-%d-%s", 1000000000+r.IntN(900000000), 1000000000000+r.Int64N(900000000000), randStr(r, alnum, 24))
	},
	"slack-user": func(r *rand.Rand) string {
		return fmt.Sprintf("xoxp-%d-%d-%d-%s", 1000000000+r.IntN(900000000), 1000000000+r.IntN(900000000), 1000000000000+r.Int64N(900000000000), randStr(r, hexLower, 32))
	},
	"stripe":            func(r *rand.Rand) string { return "sk_live_" + randStr(r, alnum, 24+r.IntN(76)) },
	"stripe-restricted": func(r *rand.Rand) string { return "rk_live_" + randStr(r, alnum, 24+r.IntN(76)) },
	"google":            func(r *rand.Rand) string { return "AIza" + randStr(r, alnum+"-_", 35) },
	"gitlab":            func(r *rand.Rand) string { return "glpat-" + randStr(r, alnum+"-_", 20) },
	"huggingface":       func(r *rand.Rand) string { return "hf_" + randStr(r, alnum, 34) },
	"sendgrid":          func(r *rand.Rand) string { return "SG." + randStr(r, b64url, 22) + "." + randStr(r, b64url, 43) },
	"npm":               func(r *rand.Rand) string { return "npm_" + randStr(r, alnum, 36) },
}

// awsAccessKey is an access key ID: AKIA (long-term) or ASIA (temporary)
// and 16 base-32 characters.
func awsAccessKey(r *rand.Rand, temporary bool) string {
	p := "AKIA"
	if temporary {
		p = "ASIA"
	}
	return p + randStr(r, base32AWS, 16)
}

// awsSecretKey is 40 characters of the secret access key's alphabet.
func awsSecretKey(r *rand.Rand) string {
	for {
		s := randStr(r, b64chars, 40)
		// a real one mixes classes; so must ours, or a detector's entropy
		// check would rightly doubt it.
		if strings.ContainsAny(s, digits) && strings.ContainsAny(s, upper) && strings.ContainsAny(s, lower) {
			return s
		}
	}
}
