package pii

import (
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

func TestDateOfBirth(t *testing.T) {
	runTable(t, detect.DateOfBirth, []tcase{
		{"born on day month year", "She was born on 5 March 1984 in Leeds.", []string{"5 March 1984"}},
		{"dob slashes", "DOB: 03/05/1984", []string{"03/05/1984"}},
		{"d.o.b.", "D.O.B. 1984-03-05", []string{"1984-03-05"}},
		{"date of birth iso", "date of birth 1984-03-05,", []string{"1984-03-05"}},
		{"month day year", "born March 5th, 1984", []string{"March 5th, 1984"}},
		{"abbreviated month", "Birthdate: Mar. 5, 1984", []string{"Mar. 5, 1984"}},
		{"german", "Geburtsdatum: 05.03.1984", []string{"05.03.1984"}},
		{"german month", "geboren am 5. März 1984", []string{"5. März 1984"}},
		{"french", "né le 5 mars 1984", []string{"5 mars 1984"}},
		{"spanish", "fecha de nacimiento: 5 de marzo de 1984", []string{"5 de marzo de 1984"}},
		{"two-digit year", "DOB 3/5/84", []string{"3/5/84"}},

		{"no birth word", "The meeting is on 5 March 1984.", nil},
		{"year only", "born in 1984", nil},
		{"no date", "DOB: unknown", nil},
		{"too far", "born, as the long story in the archive tells us here, on 5 March 1984", nil},
		{"invalid month", "DOB: 1984-13-05", nil},
		{"birthday without year", "my birthday is March 5", nil},
	})
}

func TestPassport(t *testing.T) {
	runTable(t, detect.Passport, []tcase{
		{"number label", "passport number: X12345678", []string{"X12345678"}},
		{"no.", "Passport No. 123456789.", []string{"123456789"}},
		{"german", "Reisepass C01X00T47", []string{"C01X00T47"}},
		{"is", "my passport is 987654321", []string{"987654321"}},
		{"french", "numéro de passeport : 12AB34567", []string{"12AB34567"}},

		{"photo size", "passport photo size 35x45", nil},
		{"no number", "my passport expired last year", nil},
		{"office", "the passport office at 10 Main St", nil},
		{"too short", "passport 12345", nil},
		{"no word", "code X12345678", nil},
	})
}

func TestDriversLicense(t *testing.T) {
	runTable(t, detect.DriversLicense, []tcase{
		{"driver's license", "driver's license D123-4567-8901", []string{"D123-4567-8901"}},
		{"uk licence", "Driving licence: MORGA657054SM9IJ", []string{"MORGA657054SM9IJ"}},
		{"dl#", "DL# A1234567", []string{"A1234567"}},
		{"curly apostrophe", "driver’s license number is 123456789", []string{"123456789"}},
		{"german", "Führerscheinnummer B072RRE2I55", []string{"B072RRE2I55"}},

		{"renewal", "driver's license renewal takes a week", nil},
		{"software licence", "license MIT-2024", nil},
		{"lower-case dl", "the dl 12345678 link", nil},
		{"no digits", "driver's license ABCDEFG", nil},
	})
}

func TestDateAt(t *testing.T) {
	tests := []struct {
		s    string
		end  int
		want bool
	}{
		{"1984-03-05", 10, true},
		{"31.12.1999", 10, true},
		{"12/31/1999", 10, true},
		{"31/31/1999", 0, false},
		{"5th of March, 1984", 18, true},
		{"March 1984", 0, false},
		{"1984-03-05x", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			end, ok := dateAt(tt.s, 0)
			if ok != tt.want || ok && end != tt.end {
				t.Errorf("dateAt(%q) = %d, %v; want %d, %v", tt.s, end, ok, tt.end, tt.want)
			}
		})
	}
}
