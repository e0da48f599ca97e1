package pii

import (
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// prompt4KB is a realistic 4 KB prompt: a support request quoting an
// e-mail thread, a log excerpt and a code snippet, with a dozen PII values
// among ordinary prose, numbers, versions, dates and identifiers.
var prompt4KB = func() string {
	const body = `You are a helpful support assistant. Summarise the thread below for the ticket system, list the
customer's open requests, and draft a polite reply. Do not invent facts; if a field is missing, say so.

--- forwarded thread ---
From: Maria Gonzalez <maria.gonzalez@example.com>
Sent: Tuesday, 14 May 2024 09:12
Subject: Refund for order 4512056184529158 and card change

Dear Mr. Thompson,

I was charged twice for order 4512056184529158 (invoice INV-2024-000123, 2 x 49.90 EUR) on 2024-05-02.
Please refund the second charge to my card 4242 4242 4242 4242 or, if that is not possible, to my account
IBAN DE89 3704 0044 0532 0130 00. You can reach me at +44 20 7946 0958 or on my mobile (415) 555-0132
between 9:00 and 17:30. My date of birth is 5 March 1984 if you need to verify my identity.

The app (version 3.14.2, build 20240501.7) also crashed twice on my phone, IMEI 490154203237518, while
uploading pages 12-18 of my statement. I tried reinstalling @acme/mobile-sdk@2.8.1 as your FAQ says.

Kind regards,
Maria Gonzalez

--- reply from support ---
Hi Maria,

thanks for reaching out. I have opened case 2024-05-14-0042 and asked our billing team to look into it.
Our records show the charges were made from 203.0.113.7 and 2001:db8::8a2e:370:7334; please confirm
these are yours. For the refund we also need the last four digits of the card, not the full number.

Best regards,
James Thompson
Customer Care | Acme Ltd. | +1-202-555-0173

--- log excerpt ---
2024-05-14T09:12:44.512Z INFO  request_id=550e8400-e29b-41d4-a716-446655440000 user=42 path=/v1/refunds
2024-05-14T09:12:44.530Z WARN  retry=2 latency_ms=1532 upstream=10.20.30.40:8443 sha=3f786850e387550f
2024-05-14T09:12:45.001Z ERROR card_check failed: luhn ok, issuer timeout after 30000 ms (attempt 3/3)

--- code ---
func refund(ctx context.Context, orderID string, amount decimal.Decimal) error {
	if amount.LessThanOrEqual(decimal.Zero) { return errInvalidAmount }
	return billing.Refund(ctx, orderID, amount, billing.WithIdempotencyKey(orderID+"-r1"))
}

Please answer in English and keep it under 200 words. Mention the SSN 536-22-1234 only if needed.
`
	var b strings.Builder
	for b.Len() < 4096 {
		b.WriteString(body)
		b.WriteString("\nAdditional notes: the customer has been with us since 2019 and rates the service 4.5 of 5. ")
	}
	return b.String()[:4096]
}()

func BenchmarkDetect4KB(b *testing.B) {
	d := New()
	dst := make([]detect.Finding, 0, 64)
	b.SetBytes(int64(len(prompt4KB)))
	b.ReportAllocs()
	for b.Loop() {
		dst = d.Detect(prompt4KB, dst[:0])
	}
}

// BenchmarkDetectProse4KB is the cost on text with no number and no PII.
func BenchmarkDetectProse4KB(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog, and then it rests in the shade of an old tree. ", 50)[:4096]
	d := New()
	dst := make([]detect.Finding, 0, 64)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		dst = d.Detect(text, dst[:0])
	}
}

func TestPrompt4KBFindings(t *testing.T) {
	fs := detect.Resolve(New().Detect(prompt4KB, nil), len(prompt4KB))
	got := map[detect.Type]int{}
	for _, f := range fs {
		got[f.Type]++
	}
	// The benchmark must measure real work: the prompt's values are found.
	for typ, min := range map[detect.Type]int{detect.Email: 1, detect.Phone: 3, detect.CreditCard: 1, detect.IBAN: 1,
		detect.IPAddress: 2, detect.Person: 3, detect.DateOfBirth: 1, detect.SSN: 1} {
		if got[typ] < min {
			t.Errorf("%d %s findings in the 4 KB prompt, want at least %d", got[typ], typ, min)
		}
	}
	for _, f := range fs {
		if f.Type == detect.CreditCard && prompt4KB[f.Start:f.End] == "4512056184529158" {
			t.Errorf("order number found as a card")
		}
	}
}
