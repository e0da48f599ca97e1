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
	"maestro": "card:maestro+luhn", "maestro-range": "card:maestro+luhn", "other": "card:other+luhn"}

// cardSep reports whether s separates a card's groups: one space, dash or
// dot, or a dash between spaces (Unicode spaces and dashes count as theirs).
func cardSep(s string) bool {
	switch plainSep(s) {
	case " ", "-", ".", " - ":
		return true
	}
	return false
}

// otherCard reports whether Luhn-valid digits of no brand in iins still
// read as a card (RuPay 81/82, Troy 9792, BC Card 94, Humo 9860, UATP's
// 15-digit 1…, national schemes): a payment-card major industry
// identifier (1–9; 0 is no issuer's), at least four distinct digits (not a
// filler such as 9999 9999 9999 9995), and either a card word next to it
// (12–19 digits) or grouped like a card (15–19 digits; "6029 1417 7763
// 1702"). Without either, a bare Luhn-valid number is as likely an order or
// account number: one in ten of them passes Luhn.
func otherCard(digits []byte, grouped, cardWord bool) bool {
	// 0 is no issuer's; 89 starts every SIM card's ICCID.
	if len(digits) < 12 || len(digits) > 19 || digits[0] == '0' || digits[0] == '8' && digits[1] == '9' {
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
	return distinct >= 4 && (cardWord || grouped && len(digits) >= 15)
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
// Diners Club, UnionPay, Mir, Maestro), the first that fits winning.
// 15-digit lengths are given only where the brand issues them (Amex, the
// old JCB 1800/2131), which keeps IMEIs — 15 digits, Luhn-valid, reporting
// bodies 01, 35, 86, 99… — out. The last two rows are Maestro's whole
// range (50, 56–69), which also holds the schemes issued in it (Dankort
// 5019, Verve 5061/5078, RuPay 508/60, Elo 5067/6277/6362/6504…, Hipercard
// 6062, InterPayment 636, InstaPayment 637–639): brand "maestro-range",
// scored lower than a brand's own prefix.
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
	{50, 50, 2, lens(12, 13, 14, 15, 16, 17, 18, 19), "maestro-range"},
	{56, 69, 2, lens(12, 13, 14, 15, 16, 17, 18, 19), "maestro-range"},
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
	// Words that name a payment card: next to a Luhn-valid number they
	// make it a card, even with a not-a-card word close by ("card used for
	// order 4242…").
	cardWords = newWordSet("card", "cards", "cardholder", "credit", "debit", "visa", "mastercard", "amex",
		"american express", "discover", "jcb", "diners", "unionpay", "maestro", "rupay", "hipercard", "dankort",
		"uatp", "cc", "ccn", "pan", "kreditkarte", "karte", "kartennummer", "kreditkartennummer", "karteninhaber",
		"girocard", "bankkarte", "debitkarte", "tarjeta", "carte", "cb", "expiry", "exp", "expires", "expiration",
		"cvv", "cvc", "cvv2", "gültig", "caducidad", "vencimiento")
	// Words about paying: they support a number as a card, but a
	// not-a-card word close by wins over them ("payment reference 4242…",
	// "invoice 4242… please pay").
	payWords = newWordSet("payment", "pay", "paid", "charge", "charged", "debited", "billed", "billing",
		"checkout", "declined", "refund", "wallet", "zahlung", "bezahlt", "pago", "pagué", "pagado", "cargo",
		"paiement", "payé", "payée", "débiter", "prélèvement")
	// Words that label a number as something else, even when Luhn-valid.
	notCardWords = newWordSet("order", "orders", "tracking", "track", "invoice", "inv", "imei", "isbn",
		"serial", "sn", "sku", "part", "pn", "ref", "reference", "shipment", "parcel", "awb",
		"transaction id", "txn", "ticket", "case", "po", "bestellung", "rechnung", "pedido", "factura",
		"commande", "facture", "meid", "iccid", "imsi", "barcode", "ean", "upc", "gtin",
		"account", "acct", "bestellnummer", "sendungsnummer", "rechnungsnummer", "auftragsnummer",
		"kundennummer", "vorgangsnummer", "referenz", "verwendungszweck", "konto", "kontonummer",
		"referencia", "seguimiento", "cuenta", "suivi", "compte", "colis", "référence")
)

// labelledNotCard reports whether a not-a-card word labels the number at
// start: one within 32 bytes before it, in its clause (see clauseStart),
// and not part of a phrase that labels nothing ("in order to", "in case",
// "keep track of").
func labelledNotCard(text string, start int) bool {
	cs := clauseStart(text, start, 32)
	var buf [maxWindow]byte
	low := fold(buf[:], text[cs:start])
	for i := 0; i < len(low); {
		w, at := notCardWords.next(low, i)
		if w == "" {
			return false
		}
		i = at + len(w)
		prev := string(prevToken(low, at))
		switch {
		case (w == "order" || w == "case") && prev == "in",
			w == "track" && (prev == "keep" || prev == "on"),
			w == "part" && (prev == "in" || prev == "my" || prev == "our"):
			continue
		}
		return true
	}
	return false
}

// prevToken is the token of low that ends before i, empty if none.
func prevToken(low []byte, i int) []byte {
	e := i
	for e > 0 && !tokenByte(low[e-1]) {
		e--
	}
	b := e
	for b > 0 && tokenByte(low[b-1]) {
		b--
	}
	return low[b:e]
}

// pathSegment reports whether groups i..j of r, one group, are a whole
// segment of a URL path ("/v1/cards/4242424242424242", ".../4242…?x=1"):
// stuck to the word before by a '/' only, so not glued into an identifier.
func pathSegment(text string, r *numRun, i, j int) bool {
	if i != 0 || j != i || r.afterAt || r.inIBAN || j == r.n-1 && r.gluedAfter {
		return false
	}
	s := r.g[i].start
	return s > 0 && text[s-1] == '/'
}

// clauseStart is where the clause holding text[start:] begins, at most
// window bytes back: after a blank line or the end of a sentence (". ",
// "! ", "? " after a word of four or more letters, so "no. 4242…" and
// "Ref. 4242…" stay one clause). A not-a-card word before it labels
// something else ("Subject: Invoice 2231\n\nPlease use 4242…").
func clauseStart(text string, start, window int) int {
	from := max(0, start-window)
	for i := start - 1; i > from; i-- {
		switch text[i] {
		case '\n':
			if text[i-1] == '\n' || text[i-1] == '\r' && i >= 2 && text[i-2] == '\n' {
				return i + 1
			}
		case ' ', '\t':
			p := text[i-1]
			if p != '.' && p != '!' && p != '?' {
				continue
			}
			k := i - 1
			for k > from && isLetter(text[k-1]) {
				k--
			}
			if i-1-k >= 4 || p != '.' {
				return i + 1
			}
		}
	}
	return from
}

// cardsInRun finds card numbers among the groups of r: 12–19 digits, all in
// one group or grouped as cardGrouping allows, with one kind of separator
// (cardSep), the Luhn check, and an IIN range and length of a brand (or of
// none, with the evidence otherCard asks for). The score is lowered by a
// not-a-card word that labels the number (labelledNotCard) unless a card
// word is near, and raised a little by a card or payment word.
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
			if nd < 12 || !cardGrouping(r, i, j) || r.glued(i, j) && !pathSegment(text, r, i, j) || i == 0 && r.plus {
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
			card := near(text, start, end, 40, cardWords)
			pay := !card && near(text, start, end, 40, payWords)
			neg := labelledNotCard(text, start)
			brand := brandOf(buf[:n])
			score := 0.9
			weak := brand == "" || brand == "maestro-range" || brand == "maestro" && n <= 15
			switch {
			case weak && midChain(text, r, i, j):
				// The tail of a longer grouped number that failed ("9400
				// 1234 5678 9015" → "1234 5678 9015") is no card of a
				// weak brand.
				continue
			case brand == "" && otherCard(buf[:n], j > i, card || pay):
				// A Luhn-valid number of a brand not in the table: a card
				// when grouped like one or named a card.
				brand, score = "other", 0.7
			case brand == "":
				continue
			case brand == "maestro-range" && j == i && !card && !pay:
				// Maestro's whole range is wide: a bare number in it needs
				// a word about cards or paying.
				continue
			case n <= 15 && (brand == "maestro" || brand == "maestro-range"):
				// 12–15-digit Maestro numbers are as often other
				// identifiers.
				score = 0.6
			case brand == "maestro-range":
				score = 0.8
			}
			switch {
			case neg && card:
				score = 0.6
			case neg:
				score = 0.3
			case card || pay:
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
// number: one group, fours with a shorter last group, 4-6-5 / 4-6-4,
// 6-13, or 13 digits as 4-3-3-3 or 4-4-5.
func cardGrouping(r *numRun, i, j int) bool {
	if i == j {
		return true
	}
	l := func(k int) int { return r.g[k].end - r.g[k].start }
	if j-i == 2 && l(i) == 4 && l(i+1) == 6 && (l(j) == 5 || l(j) == 4) {
		return true
	}
	// A 19-digit number as its six-digit IIN and the rest (UnionPay and
	// other 19-digit cards as some banks print them).
	if j-i == 1 && l(i) == 6 && l(j) == 13 {
		return true
	}
	// 13 digits as 4-3-3-3 (old embossed Visa) or 4-4-5.
	if j-i == 3 && l(i) == 4 && l(i+1) == 3 && l(i+2) == 3 && l(j) == 3 ||
		j-i == 2 && l(i) == 4 && l(i+1) == 4 && l(j) == 5 {
		return true
	}
	for k := i; k < j; k++ {
		if l(k) != 4 {
			return false
		}
	}
	return l(j) >= 1 && l(j) <= 4
}

// midChain reports whether groups i..j of r continue a chain of
// four-digit groups before i with the same separator, group i-1 being
// part of no card found before.
func midChain(text string, r *numRun, i, j int) bool {
	if i == 0 || r.g[i-1].used || r.g[i-1].date || r.g[i-1].end-r.g[i-1].start != 4 {
		return false
	}
	s := r.sep(text, i)
	return cardSep(s) && (j == i || s == r.sep(text, i+1))
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
