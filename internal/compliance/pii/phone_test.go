package pii

import (
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

func TestPhone(t *testing.T) {
	runTable(t, detect.Phone, []tcase{
		{"us parens", "call (415) 555-0132 today", []string{"(415) 555-0132"}},
		{"us dashes", "415-555-0132", []string{"415-555-0132"}},
		{"us dots", "415.555.0132", []string{"415.555.0132"}},
		{"us +1", "+1 415 555 0132", []string{"+1 415 555 0132"}},
		{"us +1 dashes", "+1-202-555-0173.", []string{"+1-202-555-0173"}},
		{"us 1-800", "1-800-555-0199", []string{"1-800-555-0199"}},
		{"us extension", "415-555-0132 x204", []string{"415-555-0132 x204"}},
		{"us bare with context", "text me at 4155550132", []string{"4155550132"}},
		{"nanp shape unassigned area", "call 555-123-4567", []string{"555-123-4567"}},
		{"uk e164", "+44 20 7946 0958", []string{"+44 20 7946 0958"}},
		{"uk compact", "+447911123456", []string{"+447911123456"}},
		{"de", "Tel. +49 30 901820", []string{"+49 30 901820"}},
		{"fr", "+33 1 42 68 53 00", []string{"+33 1 42 68 53 00"}},
		{"in", "+91 98765 43210", []string{"+91 98765 43210"}},
		{"00 prefix", "0044 20 7946 0958", []string{"0044 20 7946 0958"}},
		{"uk national with hint", "our London office: 020 7946 0958", []string{"020 7946 0958"}},
		{"de national with hint", "Büro Berlin 030 901820", []string{"030 901820"}},
		{"uk mobile national spaced", "ring 07911 123456", []string{"07911 123456"}},
		{"fr national spaced", "joignable au 01 42 68 53 00", []string{"01 42 68 53 00"}},
		{"es national spaced", "móvil 612 34 56 78", []string{"612 34 56 78"}},
		{"region of an earlier +cc", "+44 20 7946 0958 or 020 7946 0000", []string{"+44 20 7946 0958", "020 7946 0000"}},
		{"two phones", "415-555-0132 or 415-555-0199", []string{"415-555-0132", "415-555-0199"}},
		{"de mobile compact", "Contact | +4915123615846 | Berlin", []string{"+4915123615846"}},
		{"uk with (0)", "+44 (0)20 7946 0958", []string{"+44 (0)20 7946 0958"}},
		{"faker style", "001-202-555-0173x1234", []string{"001-202-555-0173x1234"}},
		{"dotted +1", "+1.415.555.0132", []string{"+1.415.555.0132"}},
		{"fr dotted", "tél. 01.42.68.53.00", []string{"01.42.68.53.00"}},
		{"browser version", "Chrome 120.0.6099.109 crashed", nil},
		{"tel uri", "tel:+14155550132", []string{"+14155550132"}},
		{"ssn then phone", "SSN 536-22-1234, phone (415) 555-0132", []string{"(415) 555-0132"}},

		{"timestamp", "at 2023-08-15 12:30:45 UTC", nil},
		{"unix time", "created_at: 1692102645", nil},
		{"unix time with phone word", "phone log entry 1692102645", nil},
		{"isbn-10", "0-306-40615-2", nil},
		{"isbn-13", "978-3-16-148410-0", nil},
		{"part number", "Replace the filter with part 919-510-7179.", nil},
		{"order number", "order 415-555-0132", nil},
		{"imei", "The phone's IMEI is 011862976060574", nil},
		{"page range", "pp. 1234-1456", nil},
		{"thousands", "we shipped 123 456 789 units", nil},
		{"thousands commas", "revenue 67,001,972 USD", nil},
		{"version", "version 10.2.3.4567", nil},
		{"bare 10 digits", "id 4155550132", nil},
		{"date", "05/03/1984", nil},
		{"coordinates", "GPS: -21.9818, -55.7617", nil},
		{"zip", "San Francisco, CA 94103", nil},
		{"glued", "SKU-415-555-0132", nil},
		{"iban digits", "GB20 HCSM 5189 5137 3101 16", nil},
		{"card", "4242 4242 4242 4242", nil},
	})
}

func TestPhoneBudget(t *testing.T) {
	// A text of nothing but phone numbers spends its validation budget;
	// past it, international numbers with a known calling code still count,
	// unvalidated and with a lower score.
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		b.WriteString("+44 20 7946 0958 ")
	}
	text := b.String()
	fs := New(detect.Phone).Detect(text, nil)
	checked, unchecked := 0, 0
	for _, f := range fs {
		switch f.Rule {
		case "phone:e164":
			checked++
		case "phone:e164-unchecked":
			unchecked++
			if f.Score >= 0.9 {
				t.Errorf("unchecked phone scored %v, want less than a validated one", f.Score)
			}
		}
	}
	if max := phoneBudget(len(text)); checked == 0 || checked > max {
		t.Errorf("%d phones validated, want 1..%d (the budget)", checked, max)
	}
	if checked+unchecked != 2000 {
		t.Errorf("%d validated + %d unchecked phones, want 2000", checked, unchecked)
	}
}
