package pii

import (
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// Card numbers below are the brands' and payment processors' published test
// numbers.
func TestCreditCard(t *testing.T) {
	runTable(t, detect.CreditCard, []tcase{
		{"visa spaced", "card 4242 4242 4242 4242 please", []string{"4242 4242 4242 4242"}},
		{"visa dashed", "4111-1111-1111-1111", []string{"4111-1111-1111-1111"}},
		{"visa bare", "pay with 4000056655665556.", []string{"4000056655665556"}},
		{"mastercard 51-55", "MC 5555555555554444 and 5105 1051 0510 5100", []string{"5555555555554444", "5105 1051 0510 5100"}},
		{"mastercard 2-series", "2223003122003222", []string{"2223003122003222"}},
		{"amex 4-6-5", "Amex 3782 822463 10005 exp 09/27", []string{"3782 822463 10005"}},
		{"amex bare", "371449635398431", []string{"371449635398431"}},
		{"discover", "6011111111111117 / 6011 0009 9013 9424", []string{"6011111111111117", "6011 0009 9013 9424"}},
		{"jcb", "JCB 3566002020360505", []string{"3566002020360505"}},
		{"diners 14", "Diners 36227206271667", []string{"36227206271667"}},
		{"unionpay 19", "6205500000000000004", []string{"6205500000000000004"}},
		{"with expiry after", "4242 4242 4242 4242 12/25", []string{"4242 4242 4242 4242"}},
		{"order word but card word too", "card used for order: 4242424242424242", []string{"4242424242424242"}},
		{"in json", `{"pan":"4242424242424242"}`, []string{"4242424242424242"}},
		{"dotted", "card 4111.1111.1111.1111 exp 09/28", []string{"4111.1111.1111.1111"}},
		{"spaced dashes", "4111 - 1111 - 1111 - 1111", []string{"4111 - 1111 - 1111 - 1111"}},
		{"en dashes", "card 4111\u20131111\u20131111\u20131111", []string{"4111\u20131111\u20131111\u20131111"}},
		{"no-break spaces", "card 4111\u00a01111\u00a01111\u00a01111", []string{"4111\u00a01111\u00a01111\u00a01111"}},
		{"thin spaces", "4242\u20094242\u20094242\u20094242", []string{"4242\u20094242\u20094242\u20094242"}},
		{"rupay grouped", "6029 1417 7763 1702", []string{"6029 1417 7763 1702"}},
		{"elo named a card", "Card number: 6363680806360837", []string{"6363680806360837"}},
		{"troy grouped", "9792-0681-2415-8684", []string{"9792-0681-2415-8684"}},
		{"unknown brand, bare, no card word", "id 6363680806360837 assigned", nil},
		{"maestro range, 19 digits, card word", "card_number=6799990100000000019 order=7781", []string{"6799990100000000019"}},
		{"maestro range, 12 digits, grouped", "new card 5612 5585 0423 (exp 08/29)", []string{"5612 5585 0423"}},
		{"dankort, pay word", "why does 5019717010103742 keep getting declined?", []string{"5019717010103742"}},
		{"bc card named a card", "Karte 9400 1234 5678 9012", []string{"9400 1234 5678 9012"}},
		{"tail of a luhn-failing number", "Karte 9400 1234 5678 9015", nil},
		{"tail of a luhn-failing visa", "card 4242 4242 4242 4241 exp 12/27", nil},
		{"uatp 15 digits, pan", "GET /pay?pan=135410014004955&exp=1227", []string{"135410014004955"}},
		{"uatp bare, no word", "ref 135410014004955", nil},
		{"iccid grouped", "SIM 8944 1234 5678 9012 345", nil},
		{"unicode hyphen", "Kartennummer: 5297\u20100243\u20109073\u20100936", []string{"5297\u20100243\u20109073\u20100936"}},
		{"ideographic space", "card 4111\u30001111\u30001111\u30001111", []string{"4111\u30001111\u30001111\u30001111"}},
		{"19 digits as 6-13", "tarjeta 620550 0000000000004", []string{"620550 0000000000004"}},
		{"visa 13 as 4-3-3-3", "Visa 4222 222 222 222", []string{"4222 222 222 222"}},
		{"visa 13 as 4-4-5", "card 4222 2222 22222", []string{"4222 2222 22222"}},
		{"url path segment", "GET /v1/cards/4111111111111111 200", []string{"4111111111111111"}},
		{"in order to", "In order to pay, use 4111 1111 1111 1111.", []string{"4111 1111 1111 1111"}},
		{"in case", "In case it fails, use 4111 1111 1111 1111.", []string{"4111 1111 1111 1111"}},
		{"negative word in an earlier paragraph", "Subject: Invoice 2231\n\nPlease use 4111 1111 1111 1111.", []string{"4111 1111 1111 1111"}},
		{"negative word in an earlier sentence", "Your order shipped. Please use 4111 1111 1111 1111 next time.", []string{"4111 1111 1111 1111"}},
		{"payment reference", "Payment reference 4111 1111 1111 1111 - quote it on the transfer.", nil},
		{"invoice, please pay", "Invoice 4111111111111111 is overdue, please pay.", nil},
		{"account number", "Your account number is 4111111111111111.", nil},
		{"german compound", "Bestellnummer 4111 1111 1111 1111 wurde versandt.", nil},
		{"abbreviation is no sentence end", "Order no. 4111 1111 1111 1111", nil},
		{"order path segment", "GET /orders/4111111111111111 200", nil},
		{"unknown brand, luhn fails", "6029 1417 7763 1703", nil},

		{"luhn fails", "card 4242 4242 4242 4241", nil},
		{"order number luhn-valid", "Your order number is 4242424242424242, keep it.", nil},
		{"tracking number", "tracking number 5555 5555 5555 4444 shows delivered", nil},
		{"invoice", "Invoice 4111111111111111 is overdue", nil},
		{"imei luhn-valid 35", "IMEI 356938035643809", nil},
		{"imei without the word", "my handset 490154203237518 is blocked", nil},
		{"isbn-13", "ISBN 9783161484100", nil},
		{"no brand", "9999 9999 9999 9995", nil},
		{"mixed separators", "4242-4242 4242-4242", nil},
		{"part of a longer dashed id", "PN 4242-4242-4242-4242-77", nil},
		{"inside hex", "deadbeef4242424242424242cafe", nil},
		{"uuid digits", "12345678-1234-1234-1234-123456789012", nil},
		{"microsecond timestamp", "ts=1692102645123456", nil},
		{"too short", "4242 4242 42", nil},
		{"phone with plus", "call +4915123615846", nil},
	})
}

func TestLuhnAndBrand(t *testing.T) {
	tests := []struct {
		num   string
		luhn  bool
		brand string
	}{
		{"4242424242424242", true, "visa"},
		{"4242424242424241", false, "visa"},
		{"378282246310005", true, "amex"},
		{"490154203237518", true, ""}, // an IMEI: 15 digits, no 15-digit brand at 49
		{"3530111333300000", true, "jcb"},
		{"2720990000000007", true, "mastercard"},
		{"2721000000000004", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.num, func(t *testing.T) {
			if got := luhn([]byte(tt.num)); got != tt.luhn {
				t.Errorf("luhn(%s) = %v, want %v", tt.num, got, tt.luhn)
			}
			if got := brandOf([]byte(tt.num)); got != tt.brand {
				t.Errorf("brandOf(%s) = %q, want %q", tt.num, got, tt.brand)
			}
		})
	}
}
