package main

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

// hardNegRow is one line of hardneg_*.jsonl: a text with no PII and no
// secret that a naive detector would flag.
type hardNegRow struct {
	Text   string `json:"text"`
	Kind   string `json:"kind"`
	Source string `json:"source"`
}

// A negKind makes the values of one kind of hard negative; heldOut selects
// the held-out split's shapes. Frames hold "%s" where the value goes: tune
// frames and held-out frames are disjoint.
type negKind struct {
	kind    string
	value   func(r *rand.Rand, heldOut bool) string
	tune    []string
	heldOut []string
}

// luhnFail is a card-shaped number (a card brand's prefix and length) whose
// Luhn check fails.
func luhnFail(r *rand.Rand, heldOut bool) string {
	b := brands[pick(r, []string{"visa", "mastercard", "discover", "amex"})]
	n := cardNumber(r, b, "")
	last := (int(n[len(n)-1]-'0') + 1 + r.IntN(9)) % 10
	n = n[:len(n)-1] + string(byte('0'+last))
	sep := pick(r, []string{"", " "})
	if heldOut {
		sep = pick(r, []string{"", "-", " "})
	}
	return group(n, groupsOf(b, len(n)), sep)
}

// imei is a 15-digit IMEI (Luhn-valid, as IMEIs are) of a common TAC.
func imei(r *rand.Rand, heldOut bool) string {
	p := pick(r, []string{"35", "86", "01", "99"}) + randStr(r, digits, 12)
	n := p + string(luhnDigit(p))
	if heldOut && r.IntN(2) == 0 {
		return n[:2] + "-" + n[2:8] + "-" + n[8:14] + "-" + n[14:]
	}
	return n
}

func uuidV4(r *rand.Rand, _ bool) string {
	h := randStr(r, hexLower, 32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + string("89ab"[r.IntN(4)]) + h[17:20] + "-" + h[20:]
}

func gitSHA(r *rand.Rand, heldOut bool) string {
	if heldOut && r.IntN(2) == 0 {
		return randStr(r, hexLower, 7+r.IntN(6))
	}
	return randStr(r, hexLower, 40)
}

func hash(r *rand.Rand, heldOut bool) string {
	if heldOut && r.IntN(3) == 0 {
		return randStr(r, hexLower, 32)
	}
	if heldOut && r.IntN(2) == 0 {
		return "sha256:" + randStr(r, hexLower, 64)
	}
	return randStr(r, hexLower, 64)
}

// isbn is a valid ISBN-13 (tune) or ISBN-10 / ISBN-13 (held-out) with
// hyphens or without.
func isbn(r *rand.Rand, heldOut bool) string {
	if heldOut && r.IntN(2) == 0 {
		d := randStr(r, digits, 9)
		sum := 0
		for i := range 9 {
			sum += (10 - i) * int(d[i]-'0')
		}
		c := (11 - sum%11) % 11
		cs := fmt.Sprint(c)
		if c == 10 {
			cs = "X"
		}
		return d[:1] + "-" + d[1:4] + "-" + d[4:9] + "-" + cs
	}
	d := pick(r, []string{"978", "979"}) + randStr(r, digits, 9)
	sum := 0
	for i := range 12 {
		w := 1
		if i%2 == 1 {
			w = 3
		}
		sum += w * int(d[i]-'0')
	}
	full := d + fmt.Sprint((10-sum%10)%10)
	if r.IntN(2) == 0 {
		return full
	}
	return full[:3] + "-" + full[3:4] + "-" + full[4:7] + "-" + full[7:12] + "-" + full[12:]
}

func version(r *rand.Rand, heldOut bool) string {
	parts := 3 + r.IntN(2)
	var p []string
	for i := range parts {
		switch {
		case i == 0:
			p = append(p, fmt.Sprint(r.IntN(30)))
		case heldOut && i == 2 && r.IntN(3) == 0:
			p = append(p, fmt.Sprint(1000+r.IntN(30000))) // build numbers: 10.0.19045.3803
		default:
			p = append(p, fmt.Sprint(r.IntN(60)))
		}
	}
	v := strings.Join(p, ".")
	if !heldOut || r.IntN(2) == 0 {
		v = "v" + v
	}
	return v
}

func date(r *rand.Rand, heldOut bool) string {
	y, m, d := 2015+r.IntN(12), 1+r.IntN(12), 1+r.IntN(28)
	if heldOut {
		switch r.IntN(3) {
		case 0:
			return fmt.Sprintf("%02d.%02d.%d", d, m, y)
		case 1:
			return fmt.Sprintf("%d %s %d", d, months[m-1], y)
		}
		return fmt.Sprintf("%02d/%02d/%d", d, m, y)
	}
	if r.IntN(2) == 0 {
		return fmt.Sprintf("%d-%02d-%02d", y, m, d)
	}
	return fmt.Sprintf("%s %d, %d", months[m-1], d, y)
}

func pageRange(r *rand.Rand, heldOut bool) string {
	a := 10 + r.IntN(2000)
	dash := "-"
	if heldOut {
		dash = pick(r, []string{"–", "-", "--"})
	}
	return fmt.Sprintf("%d%s%d", a, dash, a+1+r.IntN(40))
}

func partNumber(r *rand.Rand, heldOut bool) string {
	if heldOut {
		return pick(r, []string{"MX", "KT", "PN", "A"}) + "-" + randStr(r, digits, 4) + "-" + randStr(r, digits, 4) + "-" + randStr(r, upperNum, 3)
	}
	return randStr(r, digits, 3) + "-" + randStr(r, digits, 3) + "-" + randStr(r, digits, 4)
}

func npmPackage(r *rand.Rand, heldOut bool) string {
	v := fmt.Sprintf("%d.%d.%d", r.IntN(20), r.IntN(40), r.IntN(30))
	if heldOut {
		return pick(r, []string{"@babel/core", "@nestjs/common", "@aws-sdk/client-s3", "@vue/cli", "@sentry/node", "@tanstack/react-query"}) + "@" + v
	}
	return pick(r, []string{"@types/node", "@angular/core", "@mui/material", "@prisma/client", "@svc/sdk", "@octokit/rest"}) + "@" + v
}

// ibanBad is a well-shaped IBAN whose check digits are wrong.
func ibanBad(r *rand.Rand, heldOut bool) string {
	c := pick(r, []string{"DE", "GB", "FR", "ES", "NL", "IT"})
	if heldOut {
		c = pick(r, []string{"BE", "AT", "CH", "PL", "PT", "IE", "SE"})
	}
	b := bban(r, c)
	good := ibanCheck(c, b)
	bad := good
	for bad == good {
		bad = fmt.Sprintf("%02d", 2+r.IntN(97))
	}
	s := c + bad + b
	if r.IntN(2) == 0 {
		return group(s, fours(len(s)), " ")
	}
	return s
}

func placeholder(r *rand.Rand, heldOut bool) string {
	if heldOut {
		return pick(r, []string{"<YOUR_API_KEY>", "sk-proj-XXXXXXXXXXXXXXXXXXXX", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
			"ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "${ANTHROPIC_API_KEY}", "sk-ant-...", "your-api-key-here", "<redacted>", "********", "REPLACE_ME", "{{ secrets.STRIPE_KEY }}"})
	}
	return pick(r, []string{"sk-...", "<API_KEY>", "xxxx", "YOUR_OPENAI_API_KEY", "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx", "AKIAXXXXXXXXXXXXXXXX",
		"$OPENAI_API_KEY", "os.environ[\"OPENAI_API_KEY\"]", "<token>", "xoxb-your-token", "sk-xxxxxxxxxxxxxxxxxxxxxxxx", "changeme"})
}

func netmask(r *rand.Rand, heldOut bool) string {
	masks := []string{"255.255.255.0", "255.255.0.0", "255.255.255.128", "255.255.255.192", "255.0.0.0", "255.255.252.0"}
	if heldOut {
		masks = []string{"255.255.255.224", "255.255.240.0", "255.255.255.240", "255.255.248.0", "255.255.255.252", "255.192.0.0"}
	}
	return pick(r, masks)
}

func timestamp(r *rand.Rand, heldOut bool) string {
	sec := 1500000000 + r.Int64N(300000000)
	if heldOut {
		if r.IntN(2) == 0 {
			return fmt.Sprint(sec*1000 + r.Int64N(1000))
		}
		return fmt.Sprintf("20%02d-%02d-%02dT%02d:%02d:%02d.%03dZ", 17+r.IntN(9), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000))
	}
	return fmt.Sprint(sec)
}

// ssnInvalid is SSN-shaped but breaks a rule: area 000, 666 or 9xx, group
// 00 or serial 0000.
func ssnInvalid(r *rand.Rand, heldOut bool) string {
	var s string
	switch r.IntN(5) {
	case 0:
		s = fmt.Sprintf("000-%02d-%04d", 1+r.IntN(99), 1+r.IntN(9999))
	case 1:
		s = fmt.Sprintf("666-%02d-%04d", 1+r.IntN(99), 1+r.IntN(9999))
	case 2:
		s = fmt.Sprintf("9%02d-%02d-%04d", r.IntN(100), 1+r.IntN(99), 1+r.IntN(9999))
	case 3:
		s = fmt.Sprintf("%03d-00-%04d", 1+r.IntN(665), 1+r.IntN(9999))
	default:
		s = fmt.Sprintf("%03d-%02d-0000", 1+r.IntN(665), 1+r.IntN(99))
	}
	if heldOut && r.IntN(2) == 0 {
		s = strings.ReplaceAll(s, "-", " ")
	}
	return s
}

func coordinates(r *rand.Rand, heldOut bool) string {
	lat, lon := -60+r.Float64()*130, -170+r.Float64()*340
	if heldOut {
		return fmt.Sprintf("%.6f,%.6f", lat, lon)
	}
	return fmt.Sprintf("%.4f, %.4f", lat, lon)
}

func base64Data(r *rand.Rand, heldOut bool) string {
	n := 30 + r.IntN(40)
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(r.IntN(256))
	}
	if heldOut {
		return "data:image/png;base64,iVBORw0KGgo" + base64.StdEncoding.EncodeToString(raw)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

func quantity(r *rand.Rand, heldOut bool) string {
	switch r.IntN(3) {
	case 0:
		return fmt.Sprintf("%d,%03d,%03d", 1+r.IntN(99), r.IntN(1000), r.IntN(1000))
	case 1:
		if heldOut {
			return fmt.Sprintf("%d %03d %03d", 1+r.IntN(99), r.IntN(1000), r.IntN(1000))
		}
		return fmt.Sprintf("%d.%02d", 1000+r.IntN(9000000), r.IntN(100))
	}
	return fmt.Sprintf("0x%08X", r.Uint32())
}
