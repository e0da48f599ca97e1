package pii

import (
	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// iinRange is a range of issuer identification numbers: cards whose first
// len(lo) digits lie in [lo, hi] and whose length is one of lengths (a bit
// set: bit n for n digits).
type iinRange struct {
	lo, hi  int
	digits  int // how many leading digits lo and hi span
	lengths uint32
	brand   string
}

// cardRules is the Rule of each brand's cards.
var cardRules = map[string]string{"visa": "card:visa+luhn", "mastercard": "card:mastercard+luhn",
	"amex": "card:amex+luhn", "discover": "card:discover+luhn", "jcb": "card:jcb+luhn",
	"diners": "card:diners+luhn", "unionpay": "card:unionpay+luhn", "mir": "card:mir+luhn",
	"maestro": "card:maestro+luhn", "other": "card:other+luhn"}

// cardSep reports whether s separates a card's groups: one space, dash or
// dot, or a dash between spaces (Unicode spaces and dashes count as theirs).
func cardSep(s string) bool {
	switch plainSep(s) {
	case " ", "-", ".", " - ":
		return true
	}
	return false
}

// otherCard reports whether Luhn-valid digits of no known brand still read
// as a card: 16 digits (the length nearly every scheme issues), a major
// industry identifier of payment cards (2–6, 8 for UnionPay and RuPay's
// 81/82, Troy's 9792), at least four distinct digits (not a filler such as
// 9999 9999 9999 9995), and grouped in fours or next to a card word.
func otherCard(digits []byte, grouped, cardWord bool) bool {
	if len(digits) != 16 {
		return false
	}
	switch d := digits[0]; {
	case d >= '2' && d <= '6', d == '8', string(digits[:4]) == "9792":
	default:
		return false
	}
	var seen [10]bool
	distinct := 0
	for _, c := range digits {
		if !seen[c-'0'] {
			seen[c-'0'] = true
			distinct++
		}
	}
	return distinct >= 4 && (grouped || cardWord)
}

func lens(ns ...int) uint32 {
	var m uint32
	for _, n := range ns {
		m |= 1 << n
	}
	return m
}

// iins are the IIN ranges of the card brands detected, from the brands'
// published ranges (Visa, Mastercard, American Express, Discover, JCB,
// Diners Club, UnionPay, Mir, Maestro). 15-digit lengths are given only
// where the brand issues them (Amex, the old JCB 1800/2131), which keeps
// IMEIs — 15 digits, Luhn-valid, reporting bodies 01, 35, 86, 99… — out.
var iins = []iinRange{
	{4, 4, 1, lens(13, 16, 19), "visa"},
	{51, 55, 2, lens(16), "mastercard"},
	{2221, 2720, 4, lens(16), "mastercard"},
	{34, 34, 2, lens(15), "amex"},
	{37, 37, 2, lens(15), "amex"},
	{6011, 6011, 4, lens(16, 17, 18, 19), "discover"},
	{644, 649, 3, lens(16, 17, 18, 19), "discover"},
	{65, 65, 2, lens(16, 17, 18, 19), "discover"},
	{3528, 3589, 4, lens(16, 17, 18, 19), "jcb"},
	{1800, 1800, 4, lens(15), "jcb"},
	{2131, 2131, 4, lens(15), "jcb"},
	{300, 305, 3, lens(14, 16, 17, 18, 19), "diners"},
	{3095, 3095, 4, lens(14, 16, 17, 18, 19), "diners"},
	{36, 36, 2, lens(14, 16, 17, 18, 19), "diners"},
	{38, 39, 2, lens(14, 16, 17, 18, 19), "diners"},
	{62, 62, 2, lens(16, 17, 18, 19), "unionpay"},
	{8100, 8171, 4, lens(16, 17, 18, 19), "unionpay"},
	{2200, 2204, 4, lens(16, 17, 18, 19), "mir"},
	{5018, 5018, 4, lens(12, 13, 14, 15, 16, 17, 18, 19), "maestro"},
	{5020, 5020, 4, lens(12, 13, 14, 15, 16, 17, 18, 19), "maestro"},
	{5038, 5038, 4, lens(12, 13, 14, 15, 16, 17, 18, 19), "maestro"},
	{5893, 5893, 4, lens(12, 13, 14, 15, 16, 17, 18, 19), "maestro"},
	{6304, 6304, 4, lens(12, 13, 14, 15, 16, 17, 18, 19), "maestro"},
	{6759, 6759, 4, lens(12, 13, 14, 15, 16, 17, 18, 19), "maestro"},
	{6761, 6763, 4, lens(12, 13, 14, 15, 16, 17, 18, 19), "maestro"},
}

// brandOf returns the brand whose IIN range and length fit the digits of a
// number, "" if none does.
func brandOf(digits []byte) string {
	for _, r := range iins {
		if len(digits) < r.digits || r.lengths&(1<<len(digits)) == 0 {
			continue
		}
		p := 0
		for _, c := range digits[:r.digits] {
			p = p*10 + int(c-'0')
		}
		if p >= r.lo && p <= r.hi {
			return r.brand
		}
	}
	return ""
}

// luhn reports whether digits (ASCII) pass the Luhn check.
func luhn(digits []byte) bool {
	sum, double := 0, false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

var (
	cardWords = newWordSet("card", "credit", "debit", "visa", "mastercard", "amex", "american express",
		"discover", "jcb", "diners", "unionpay", "cc", "ccn", "pan", "payment", "pay", "kreditkarte",
		"karte", "tarjeta", "carte", "cb", "expiry", "exp", "cvv", "cvc")
	// Words next to numbers that are not cards even when Luhn-valid.
	notCardWords = newWordSet("order", "orders", "tracking", "track", "invoice", "inv", "imei", "isbn",
		"serial", "sn", "sku", "part", "pn", "ref", "reference", "shipment", "parcel", "awb",
		"transaction id", "txn", "ticket", "case", "po", "bestellung", "rechnung", "pedido", "factura",
		"commande", "facture", "meid", "iccid", "imsi", "barcode", "ean", "upc", "gtin")
)

// cardsInRun finds card numbers among the groups of r: 12–19 digits, all in
// one group or grouped in fours (the last group shorter), 4-6-5 or 4-6-4,
// with one kind of separator (space or dash), an IIN range and length of a
// brand, and the Luhn check.
func cardsInRun(text string, r *numRun, dst []detect.Finding) []detect.Finding {
	var buf [19]byte
	for i := 0; i < r.n; i++ {
		if r.g[i].date {
			continue
		}
		found := -1
		// Longest window first: "4111 1111 1111 1111 12/25" is one card and
		// an expiry date.
		best := i
		nd := 0
		for j := i; j < r.n && !r.g[j].date; j++ {
			if j > i {
				s := r.sep(text, j)
				if !cardSep(s) || s != r.sep(text, i+1) {
					break
				}
			}
			nd += r.g[j].end - r.g[j].start
			if nd > 19 {
				break
			}
			best = j
		}
		for j := best; j >= i; j-- {
			nd := r.digits(i, j)
			// A '+' opens a phone number, never a card.
			if nd < 12 || !cardGrouping(r, i, j) || r.glued(i, j) || i == 0 && r.plus {
				continue
			}
			// A dashed window inside a longer dashed chain is a part of an
			// identifier (part numbers, UUID-like codes).
			if r.g[i].date || dashLinked(text, r, i, j) {
				continue
			}
			n := 0
			for k := i; k <= j; k++ {
				n += copy(buf[n:], text[r.g[k].start:r.g[k].end])
			}
			if !luhn(buf[:n]) {
				continue
			}
			start, end := r.g[i].start, r.g[j].end
			pos, neg := near(text, start, end, 40, cardWords), before(text, start, 32, notCardWords)
			brand := brandOf(buf[:n])
			score := 0.9
			switch {
			case brand == "" && otherCard(buf[:n], j > i, pos):
				// A Luhn-valid number of a brand not in the table (RuPay,
				// Elo, Troy, Verve, national schemes): a card when grouped
				// in fours or named a card.
				brand, score = "other", 0.7
			case brand == "":
				continue
			case n <= 15 && brand == "maestro":
				score = 0.6
			}
			switch {
			case neg && pos:
				score = 0.6
			case neg:
				score = 0.3
			case pos:
				score += 0.09
			}
			dst = append(dst, finding(detect.CreditCard, start, end, score, cardRules[brand]))
			r.use(i, j)
			found = j
			break
		}
		if found >= 0 {
			i = found
		}
	}
	return dst
}

// cardGrouping reports whether groups i..j of r are grouped like a card
// number: one group, fours with a shorter last group, or 4-6-5 / 4-6-4.
func cardGrouping(r *numRun, i, j int) bool {
	if i == j {
		return true
	}
	l := func(k int) int { return r.g[k].end - r.g[k].start }
	if j-i == 2 && l(i) == 4 && l(i+1) == 6 && (l(j) == 5 || l(j) == 4) {
		return true
	}
	for k := i; k < j; k++ {
		if l(k) != 4 {
			return false
		}
	}
	return l(j) >= 1 && l(j) <= 4
}

// dashLinked reports whether groups i..j of r, joined by dashes, continue
// with a dash into a group before i or after j.
func dashLinked(text string, r *numRun, i, j int) bool {
	if i == j {
		return false
	}
	if s := r.sep(text, i+1); s != "-" {
		return false
	}
	return i > 0 && r.sep(text, i) == "-" || j+1 < r.n && r.sep(text, j+1) == "-"
}
