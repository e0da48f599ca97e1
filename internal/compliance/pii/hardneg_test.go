package pii

import (
	"testing"
)

// TestHardNegatives runs every detector over texts that hold no PII though
// a list of patterns would flag them.
func TestHardNegatives(t *testing.T) {
	texts := map[string]string{
		"luhn-failing order number":   "Your order number is 4512056184529158, keep it for returns.",
		"luhn-failing spaced":         "Reference no. 5342 0417 0562 5289 - please quote it when you call.",
		"luhn-valid order number":     "Order 4242424242424242 has shipped and should arrive Monday.",
		"luhn-valid tracking":         "tracking number 5555 5555 5555 4444 shows delivered",
		"invoice":                     "Invoice INV-2024-000123 for 4111111111111111 units? no: invoice 4111111111111111.",
		"imei":                        "IMEI: 490154203237518 (blocked after theft report)",
		"imei 35":                     "The phone's IMEI is 356938035643809, can you unlock it?",
		"imei 01":                     "The phone's IMEI is 011862976060574, can you unlock it?",
		"uuid":                        "Request ID 550e8400-e29b-41d4-a716-446655440000 failed with a timeout.",
		"uuid digits":                 "workspace 12345678-1234-1234-1234-123456789012",
		"git sha":                     "The bug was introduced in commit 3f786850e387550fdab836ed7e6dc881de23001b.",
		"short sha":                   "fixed in 4b825dc and 1234567",
		"sha256":                      "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"md5":                         "md5 d41d8cd98f00b204e9800998ecf8427e",
		"isbn-13":                     "The book's ISBN is 978-3-16-148410-0.",
		"isbn-13 compact":             "Can you find ISBN 9783161484100 in the catalogue?",
		"isbn-10":                     "ISBN 0-306-40615-2",
		"version":                     "Upgrade to v1.8.50.34 to get the fix; version 10.0.0.1 is old.",
		"chrome version":              "Chrome 120.0.6099.109 crashed",
		"semver":                      "released 2.14.3",
		"date":                        "Please submit the report before November 11, 2026 (2026-11-11).",
		"datetime":                    "at 2023-08-15 12:30:45 UTC",
		"page range":                  "Read chapter 3, pp. 1651-1665, before class.",
		"part number":                 "Part number 981-654-0111 is out of stock.",
		"part number letters":         "PN-4521-3389-0012-77",
		"npm scope":                   "npm install @scope/package@1.2.3",
		"npm scope 4 parts":           "Which version of @prisma/client@14.33.4 supports ESM?",
		"iban bad check":              "The IBAN DE89 3704 0044 0532 0130 01 has a typo.",
		"iban bad check letters":      "Is GB20 HCSM 5189 5137 3101 16 a valid IBAN?",
		"unix timestamp":              "The event timestamp is 1593989288.",
		"ms timestamp":                "created_at: 1692102645123",
		"compact timestamp":           "build 20230815123045",
		"netmask":                     "netmask 255.255.255.0, gateway on the first address",
		"oid":                         "OID 1.3.6.1.4.1.311.21.7",
		"coordinates":                 "GPS: -21.9818, -55.7617",
		"quantity":                    "We shipped 55,906,986 units; revenue was 5719066.73 USD.",
		"mac":                         "MAC 00:1A:2B:3C:4D:5E",
		"time":                        "the call is at 10:30:00",
		"code":                        "std::vector<int> v; v.push_back(1);",
		"hello world":                 "Hello World! Dear Sir or Madam, hi team.",
		"placeholder email":           "set EMAIL=<your-email> and KEY=xxxx",
		"asset":                       "use logo@2x.png",
		"zip":                         "Beverly Hills, CA 90210",
		"phone-looking ticket":        "Ticket 000-94-2701 reopened by the customer.",
		"phone word with a timestamp": "phone log entry 1692102645",
	}
	d := New()
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			for _, f := range d.Detect(text, nil) {
				t.Errorf("%s %q (score %.2f, rule %s) in %q, want nothing", f.Type, text[f.Start:f.End], f.Score, f.Rule, text)
			}
		})
	}
}
