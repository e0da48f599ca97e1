// Command cardsfresh writes cards_fresh.jsonl, a labelled set for the
// CREDIT_CARD detector written independently of the compliance quality
// sets (it reuses none of their templates or generator): card numbers of
// every brand with a published IIN range (random digits in the range and
// the brand's lengths, a Luhn check digit; plus the brands' published test
// numbers), written in many formats, inside many sentence frames (support
// tickets, payment confirmations, chat, forms, JSON, YAML, CSV, markdown,
// logs, URLs; English, German, Spanish, French), and hard negatives:
// Luhn-valid brand-shaped numbers labelled as orders, invoices, tracking
// and payment references, IMEIs, ISBNs, phone numbers, timestamps, UUID
// pieces, account numbers, masked card numbers.
//
// Deterministic (fixed seed). From internal/compliance/pii:
//
//	go run ./testdata/cardsfresh > testdata/cards_fresh.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// brand is a card scheme: IIN prefixes (ranges of equal-length prefixes)
// and the lengths it issues.
type brand struct {
	name    string
	ranges  [][2]int // inclusive prefix ranges, lo and hi of one digit count
	lengths []int
}

// brands are the schemes' published IIN ranges and lengths (Wikipedia,
// "Payment card number", and the schemes' own pages).
var brands = []brand{
	{"visa", [][2]int{{4, 4}}, []int{13, 16, 19}},
	{"mastercard", [][2]int{{51, 55}, {2221, 2720}}, []int{16}},
	{"amex", [][2]int{{34, 34}, {37, 37}}, []int{15}},
	{"discover", [][2]int{{6011, 6011}, {644, 649}, {65, 65}}, []int{16, 17, 18, 19}},
	{"jcb", [][2]int{{3528, 3589}}, []int{16, 17, 18, 19}},
	{"diners", [][2]int{{300, 305}, {36, 36}, {38, 39}}, []int{14, 16, 17, 18, 19}},
	{"unionpay", [][2]int{{62, 62}}, []int{16, 17, 18, 19}},
	{"unionpay81", [][2]int{{8100, 8171}}, []int{16, 17, 18, 19}},
	{"maestro", [][2]int{{5018, 5018}, {5020, 5020}, {5038, 5038}, {5612, 5612}, {5700, 5799}, {5893, 5893},
		{6304, 6304}, {6390, 6390}, {6759, 6759}, {6761, 6763}, {6799, 6799}}, []int{12, 13, 14, 15, 16, 17, 18, 19}},
	{"mir", [][2]int{{2200, 2204}}, []int{16, 17, 18, 19}},
	{"rupay", [][2]int{{6069, 6085}, {652150, 653149}, {8100, 8199}, {8200, 8299}, {508, 508}}, []int{16}},
	{"elo", [][2]int{{401178, 401179}, {438935, 438935}, {451416, 451416}, {457631, 457632}, {504175, 504175},
		{506699, 506778}, {509000, 509999}, {627780, 627780}, {636297, 636297}, {636368, 636368},
		{650031, 650033}, {650485, 650538}, {651652, 651679}, {655000, 655019}}, []int{16}},
	{"hipercard", [][2]int{{606282, 606282}, {384100, 384100}, {384140, 384140}, {384160, 384160}}, []int{16, 19}},
	{"troy", [][2]int{{9792, 9792}}, []int{16}},
	{"verve", [][2]int{{506099, 506198}, {650002, 650027}, {507865, 507964}}, []int{16, 18, 19}},
	{"bccard", [][2]int{{94, 94}}, []int{16}},
	{"dankort", [][2]int{{5019, 5019}, {4571, 4571}}, []int{16}},
	{"cartesbancaires", [][2]int{{4970, 4979}, {5131, 5131}}, []int{16}},
	{"uatp", [][2]int{{1, 1}}, []int{15}},
	{"interpayment", [][2]int{{636, 636}}, []int{16, 17, 18, 19}},
	{"instapayment", [][2]int{{637, 639}}, []int{16}},
	{"uzcard", [][2]int{{8600, 8600}}, []int{16}},
	{"humo", [][2]int{{9860, 9860}}, []int{16}},
}

// published are test numbers the schemes and payment processors publish
// (Stripe, Adyen, Braintree, PayPal documentation), by brand.
var published = map[string][]string{
	"visa":            {"4242424242424242", "4000056655665556", "4111111111111111", "4012888888881881", "4222222222222", "4000000000000002"},
	"mastercard":      {"5555555555554444", "2223003122003222", "5105105105105100", "2720992720992729"},
	"amex":            {"378282246310005", "371449635398431", "378734493671000"},
	"discover":        {"6011111111111117", "6011000990139424", "6011981111111113"},
	"jcb":             {"3566002020360505", "3530111333300000", "3569990010095841"},
	"diners":          {"36227206271667", "3056930009020004", "38520000023237"},
	"unionpay":        {"6200000000000005", "6205500000000000004", "6243030000000001"},
	"maestro":         {"6759649826438453", "6799990100000000019", "5000550000000029"},
	"mir":             {"2201382000000013", "2200000000000004"},
	"elo":             {"5066991111111118", "6362970000457013"},
	"hipercard":       {"6062826786276634", "6062825624254001"},
	"troy":            {"9792030394440796"},
	"dankort":         {"5019717010103742"},
	"cartesbancaires": {"4035501000000008"},
	"uatp":            {"135410014004955", "122000000000003"},
}

// card is a card number as written, with its brand and format.
type card struct{ s, brand, format string }

func luhnDigit(body string) byte {
	sum, double := 0, true
	for i := len(body) - 1; i >= 0; i-- {
		d := int(body[i] - '0')
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

func luhnOK(s string) bool { return luhnDigit(s[:len(s)-1]) == s[len(s)-1] }

// number draws a Luhn-valid number of b's ranges and one of its lengths.
func number(r *rand.Rand, b brand, length int) string {
	rg := b.ranges[r.IntN(len(b.ranges))]
	p := rg[0] + r.IntN(rg[1]-rg[0]+1)
	var s strings.Builder
	s.WriteString(strconv.Itoa(p))
	for s.Len() < length-1 {
		s.WriteByte(byte('0' + r.IntN(10)))
	}
	body := s.String()
	return body + string(luhnDigit(body))
}

// group splits n into groups of the given sizes (the last takes the rest).
func group(n string, sep string, sizes ...int) string {
	var parts []string
	for _, k := range sizes {
		if len(n) <= k {
			break
		}
		parts = append(parts, n[:k])
		n = n[k:]
	}
	parts = append(parts, n)
	return strings.Join(parts, sep)
}

func fours(n, sep string) string { return group(n, sep, 4, 4, 4, 4) }

// format writes n in one format; ok is false if the format does not apply
// to n's length.
func format(name, n string) (string, bool) {
	switch name {
	case "bare":
		return n, true
	case "space4":
		return fours(n, " "), true
	case "dash4":
		return fours(n, "-"), true
	case "dot4":
		return fours(n, "."), true
	case "nbsp4":
		return fours(n, "\u00a0"), true
	case "endash4":
		return fours(n, "\u2013"), true
	case "hyphen4": // U+2010 HYPHEN, as some word processors write it
		return fours(n, "\u2010"), true
	case "nbhyphen4":
		return fours(n, "\u2011"), true
	case "narrow4":
		return fours(n, "\u202f"), true
	case "spacedash4":
		return fours(n, " - "), true
	case "465":
		if len(n) == 15 || len(n) == 14 {
			return group(n, " ", 4, 6), true
		}
	case "465dash":
		if len(n) == 15 || len(n) == 14 {
			return group(n, "-", 4, 6), true
		}
	case "6-13":
		if len(n) == 19 {
			return group(n, " ", 6), true
		}
	}
	return "", false
}

var formats = []string{"bare", "space4", "dash4", "dot4", "nbsp4", "endash4", "hyphen4", "nbhyphen4",
	"narrow4", "spacedash4", "465", "465dash", "6-13"}

// Positive frames: {C} is the card (labelled), {C2} a second card.
var posFrames = []string{
	// support tickets and e-mails, English
	"Please charge my card {C} for the annual renewal.",
	"Card number: {C}",
	"card no. {C} exp 12/27 CVV 123",
	"Hi, I was charged twice on {C} yesterday, can you refund one of them?",
	"Ticket #48213: customer's card {C} was declined at checkout.",
	"Case 00412 - the cardholder read out {C} over the phone, please mask it.",
	"Order #5512 was paid by credit card {C} on 3 May.",
	"Subject: Re: Invoice 2231\n\nHello, please use {C} to settle the open balance.\n\nThanks, Ana",
	"Dear Mr. Smith,\n\nthe amount of EUR 129.00 will be debited from your card {C} on 14 June.\n\nKind regards,\nBilling team",
	"Payment confirmation: we received USD 42.00 from the Visa ending {C}.",
	"Your payment of $310.00 with {C} was successful. Transaction ID 88213.",
	"Please update my billing details, the new card is {C} (expires 08/29).",
	"The customer wants to replace {C} with {C2} for the monthly subscription.",
	"I lost my debit card, the number was {C}. Please block it.",
	"Can you check why {C} keeps getting declined? It worked last month.",
	"Payment method: {C} / 09/28 / 321",
	"Cardholder: Ana Ruiz, PAN {C}, expiry 11/26",
	"Customer read me her card, {C}, and asked for a callback.",
	"Refund to the original payment card {C} approved by the supervisor.",
	"[{C}] declined - insufficient funds",
	"(card: {C})",
	"\"{C}\" is the card on file for this account.",
	"pay with {C} please",
	"Here you go: {C}",
	"my cc is {C} exp 0526",
	"Reference to our call: my new card is {C}, the old one is cancelled.",
	"The ticket says the customer paid with {C}; verify the last four digits.",
	"Visa {C}",
	"MasterCard: {C}",
	"Can I add {C} as a second card to my wallet?",
	// forms, structured data
	"Name: Ana Ruiz\nCard: {C}\nExpiry: 04/28\nCVC: 991",
	"{\"customer\": \"cus_8812\", \"card_number\": \"{C}\", \"exp\": \"12/27\"}",
	"{\"pan\":\"{C}\",\"amount\":1299}",
	"payment:\n  method: card\n  number: {C}\n  expiry: 2027-12",
	"card_number: \"{C}\"",
	"id,name,card,expiry\n17,Ana Ruiz,{C},12/27",
	"17;Ana Ruiz;{C};12/27",
	"| customer | card | exp |\n| --- | --- | --- |\n| Ana Ruiz | {C} | 12/27 |",
	"2024-05-14T09:12:44Z INFO charge ok card={C} amount=12.50",
	"2024-05-14 09:12:44,512 WARN payment declined pan={C} reason=do_not_honor",
	"level=error msg=\"capture failed\" card_number={C} order=7781",
	"GET /checkout/confirm?pan={C}&exp=1227 HTTP/1.1",
	"https://shop.example.com/pay?card={C}&cvv=123",
	"$ curl -X POST https://api.example.com/charges -d number={C} -d exp_month=12",
	"<input name=\"cc\" value=\"{C}\">",
	"card number {C}\n",
	"- card: {C}\n- expiry: 10/29",
	// German
	"Kartennummer: {C}",
	"Bitte buchen Sie den Betrag von meiner Kreditkarte {C} ab.",
	"Meine Karte mit der Nummer {C} wurde gestohlen, bitte sperren.",
	"Sehr geehrte Damen und Herren,\n\nbitte belasten Sie künftig die Karte {C}.\n\nMit freundlichen Grüßen",
	"Zahlung mit {C} fehlgeschlagen, bitte erneut versuchen.",
	"Bestellung 5512: bezahlt mit Kreditkarte {C}.",
	// Spanish
	"Número de tarjeta: {C}",
	"Por favor, cargue el importe a mi tarjeta {C}.",
	"Mi tarjeta {C} fue rechazada en la tienda.",
	"Hola, el pedido 5512 lo pagué con la tarjeta {C}, ¿pueden revisarlo?",
	"Estimado cliente:\n\nel cargo se realizó en la tarjeta de crédito {C}.\n\nAtentamente",
	// French
	"Numéro de carte : {C}",
	"Veuillez débiter ma carte bancaire {C}, merci.",
	"Ma carte {C} a été refusée au paiement.",
	"Bonjour, ma commande 5512 a été payée avec la carte {C}.",
	"Madame, Monsieur,\n\nle prélèvement sera effectué sur la carte {C}.\n\nCordialement",
}

// Negative frames: {N} is a number that is no card (Luhn-valid and
// brand-shaped all the same).
var negFrames = []struct{ kind, frame string }{
	{"order", "Your order number is {N}, keep it for returns."},
	{"order", "Order {N} has shipped and should arrive Monday."},
	{"order", "Order #{N} was cancelled at your request."},
	{"order", "Bestellnummer {N} wurde versandt."},
	{"order", "Su pedido {N} está en camino."},
	{"order", "Votre commande n° {N} a été expédiée."},
	{"tracking", "tracking number {N} shows delivered but nothing arrived"},
	{"tracking", "Track your parcel: {N}"},
	{"tracking", "Sendungsnummer: {N}"},
	{"invoice", "Invoice {N} is overdue, please pay within 7 days."},
	{"invoice", "Rechnung Nr. {N} vom 03.05.2024"},
	{"invoice", "Factura {N} pendiente de pago."},
	{"invoice", "Facture n° {N} du 3 mai"},
	{"reference", "Payment reference {N} - please quote it on your transfer."},
	{"reference", "Please use the payment reference {N} when you transfer the money."},
	{"reference", "Ref: {N}"},
	{"reference", "Verwendungszweck / Referenz: {N}"},
	{"ticket", "Ticket {N} reopened by the customer."},
	{"ticket", "Case number {N} was closed."},
	{"serial", "Serial number {N}, please register the device."},
	{"transaction", "transaction id {N} settled"},
	{"account", "Your account number is {N}."},
	{"account", "Customer account {N} has been suspended."},
	{"account", "Kontonummer {N}"},
	{"po", "PO {N} approved by finance"},
	{"barcode", "EAN/barcode {N}"},
}

func main() {
	r := rand.New(rand.NewPCG(13, 2024))
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	type entity struct {
		Type   string `json:"type"`
		Start  int    `json:"start"`
		End    int    `json:"end"`
		Brand  string `json:"brand,omitempty"`
		Format string `json:"format,omitempty"`
	}
	type row struct {
		Text     string   `json:"text"`
		Entities []entity `json:"entities"`
		Kind     string   `json:"kind"`
		Brand    string   `json:"brand,omitempty"`
		Format   string   `json:"format,omitempty"`
		Frame    int      `json:"frame"`
	}
	emit := func(rw row) {
		if err := enc.Encode(rw); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	// fill renders frame with the cards cs (or a number n for {N}).
	fill := func(frame string, cs ...card) (string, []entity) {
		var b strings.Builder
		var es []entity
		k := 0
		for {
			i := strings.Index(frame, "{C")
			if i < 0 {
				b.WriteString(frame)
				break
			}
			j := strings.IndexByte(frame[i:], '}') + i
			b.WriteString(frame[:i])
			c := cs[min(k, len(cs)-1)]
			k++
			es = append(es, entity{"CREDIT_CARD", b.Len(), b.Len() + len(c.s), c.brand, c.format})
			b.WriteString(c.s)
			frame = frame[j+1:]
		}
		return b.String(), es
	}
	pick := func(b brand) card {
		for {
			n := number(r, b, b.lengths[r.IntN(len(b.lengths))])
			f := formats[r.IntN(len(formats))]
			if s, ok := format(f, n); ok {
				return card{s, b.name, f}
			}
		}
	}
	// Positives: each brand, each length, in every format that applies,
	// in a random frame; then each brand in every frame once.
	frameOf := func() int { return r.IntN(len(posFrames)) }
	for _, b := range brands {
		for _, l := range b.lengths {
			for _, f := range formats {
				n := number(r, b, l)
				s, ok := format(f, n)
				if !ok {
					continue
				}
				fi := frameOf()
				text, es := fill(posFrames[fi], card{s, b.name, f}, pick(b))
				emit(row{Text: text, Entities: es, Kind: "card", Brand: b.name, Format: f, Frame: fi})
			}
		}
	}
	for fi, frame := range posFrames {
		b := brands[fi%len(brands)]
		c := pick(b)
		text, es := fill(frame, c, pick(brands[(fi+7)%len(brands)]))
		emit(row{Text: text, Entities: es, Kind: "card", Brand: b.name, Format: c.format, Frame: fi})
	}
	for bn, ns := range sortedPublished() {
		for _, n := range ns {
			if !luhnOK(n) {
				fmt.Fprintf(os.Stderr, "published %s %s fails Luhn\n", publishedNames[bn], n)
				os.Exit(1)
			}
			f := formats[r.IntN(3)]
			s, ok := format(f, n)
			if !ok {
				s, f = n, "bare"
			}
			fi := frameOf()
			c := card{s, publishedNames[bn], f}
			text, es := fill(posFrames[fi], c, c)
			emit(row{Text: text, Entities: es, Kind: "card", Brand: publishedNames[bn], Format: f, Frame: fi})
		}
	}
	// Masked numbers, last-four mentions: no card.
	for i, m := range []string{"4111 **** **** 1111", "************4242", "5555 55XX XXXX 4444", "411111******1111",
		"**** **** **** 0005", "4242-xxxx-xxxx-4242", "3782 ****** *0005", "card ending in 4242", "last four 1111"} {
		fi := i % len(posFrames)
		text, _ := fill(posFrames[fi], card{s: m})
		emit(row{Text: text, Entities: []entity{}, Kind: "masked", Frame: fi})
	}
	// Hard negatives: brand-shaped Luhn-valid numbers with a non-card label.
	for i := 0; i < 3; i++ {
		for fi, nf := range negFrames {
			b := brands[r.IntN(8)]
			n := number(r, b, b.lengths[r.IntN(len(b.lengths))])
			s := n
			if r.IntN(2) == 0 {
				s = fours(n, " ")
			}
			text := strings.ReplaceAll(nf.frame, "{N}", s)
			emit(row{Text: text, Entities: []entity{}, Kind: nf.kind, Frame: fi})
		}
	}
	for _, t := range otherNegatives(r) {
		emit(row{Text: t[1], Entities: []entity{}, Kind: t[0]})
	}
}

var publishedNames = map[int]string{}

func sortedPublished() [][]string {
	names := []string{"visa", "mastercard", "amex", "discover", "jcb", "diners", "unionpay", "maestro", "mir",
		"elo", "hipercard", "troy", "dankort", "cartesbancaires", "uatp"}
	out := make([][]string, len(names))
	for i, n := range names {
		out[i] = published[n]
		publishedNames[i] = n
	}
	return out
}

// otherNegatives are numbers of other kinds: IMEIs, ISBNs, phones,
// timestamps, UUID pieces, long account numbers, versions.
func otherNegatives(r *rand.Rand) [][2]string {
	var out [][2]string
	add := func(kind, text string) { out = append(out, [2]string{kind, text}) }
	digits := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		return b.String()
	}
	for i := 0; i < 12; i++ {
		tac := []string{"35", "86", "01", "49", "99", "45", "52", "53"}[i%8]
		body := tac + digits(12)
		imei := body + string(luhnDigit(body))
		switch i % 4 {
		case 0:
			add("imei", "IMEI: "+imei)
		case 1:
			add("imei", "The phone's IMEI is "+imei+", can you unlock it?")
		case 2:
			add("imei", "my handset "+imei+" was stolen")
		default:
			add("imei", "IMEI "+imei[:2]+"-"+imei[2:8]+"-"+imei[8:14]+"-"+imei[14:])
		}
	}
	for i := 0; i < 8; i++ {
		body := []string{"978", "979"}[i%2] + digits(9)
		sum := 0
		for k, c := range body {
			d := int(c - '0')
			if k%2 == 1 {
				d *= 3
			}
			sum += d
		}
		isbn := body + strconv.Itoa((10-sum%10)%10)
		if i%2 == 0 {
			add("isbn", "ISBN "+isbn)
		} else {
			add("isbn", "The book's ISBN is "+isbn[:3]+"-"+isbn[3:4]+"-"+isbn[4:7]+"-"+isbn[7:12]+"-"+isbn[12:]+".")
		}
	}
	for _, p := range []string{"+49 151 23615846", "+4915123615846", "+1 415 555 0100 1234", "+44 20 7946 0958",
		"0049 30 12345678", "+34 612 345 678", "+33 6 12 34 56 78", "(415) 555-0132 ext 4421", "+91 98123 45678 / 4111"} {
		add("phone", "Call me on "+p+" tomorrow.")
	}
	for i := 0; i < 6; i++ {
		add("timestamp", "ts="+strconv.FormatInt(1692102645000000+int64(r.IntN(1e9)), 10))
		add("timestamp", "created_at: "+strconv.FormatInt(1700000000000000000+int64(r.IntN(1e15)), 10))
	}
	add("timestamp", "build 20230815123045123")
	for i := 0; i < 6; i++ {
		add("uuid", "request "+digits(8)+"-"+digits(4)+"-4"+digits(3)+"-8"+digits(3)+"-"+digits(12)+" failed")
		add("uuid", "trace id "+digits(4)+"-"+digits(4)+"-"+digits(4)+"-"+digits(4)+"-"+digits(12))
	}
	for i := 0; i < 8; i++ {
		n := digits(10 + r.IntN(4))
		add("account", "Account number "+n+", sort code 20-00-00")
		body := "0" + digits(14)
		add("account", "Please transfer to account no. "+body+string(luhnDigit(body))+".")
	}
	add("version", "Chrome 120.0.6099.109 and build 4111.1111.1111.1111-beta")
	add("quantity", "We shipped 4,111,111,111,111,111 units")
	return out
}
