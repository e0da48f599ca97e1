package model

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// hashed returns v's hashed n-gram entries, without the detector slots.
func hashed(v Vector) Vector {
	n := 0
	for n < len(v.Idx) && v.Idx[n] < HashedDim {
		n++
	}
	return Vector{Idx: v.Idx[:n], Val: v.Val[:n]}
}

func dense(v Vector) map[string]float32 {
	out := map[string]float32{}
	for i, idx := range v.Idx {
		if idx >= HashedDim {
			out[denseName(int(idx-HashedDim))] = v.Val[i]
		}
	}
	return out
}

func TestFeaturizeIsValidOnAnyInput(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 3000)
	words := strings.Repeat("a b c d e f g h i j k l m n o p q r s t u v w x y z ", 2000)
	tests := []struct {
		name     string
		text     string
		findings []detect.Finding
	}{
		{"empty", "", nil},
		{"one byte", "x", nil},
		{"white space only", " \t\n\u00a0\u2003 ", nil},
		{"invalid UTF-8 and NUL", "ab\xff\xfe\x00cd\xc3", nil},
		{"long text", long, nil},
		{"one-letter words", words, nil},
		{"random bytes", string(pseudoRandomBytes(50_000)), nil},
		{"findings out of bounds and overlapping", "call 555-0100 now", []detect.Finding{
			{Type: detect.Phone, Start: 5, End: 13, Score: 0.9},
			{Type: detect.SSN, Start: 7, End: 30, Score: 0.5},
			{Type: detect.Email, Start: -1, End: 3, Score: 1},
			{Type: detect.Email, Start: 4, End: 2, Score: 1},
			{Type: detect.PromptInjection, Start: 0, End: 17, Score: math.NaN()},
			{Type: "SOMETHING_ELSE", Start: 0, End: 4, Score: 7},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Featurize(tt.text, tt.findings)
			if err := v.Check(); err != nil {
				t.Fatalf("Featurize gave an invalid vector: %v", err)
			}
			if got := len(hashed(v).Idx); got > MaxFeatures {
				t.Errorf("got %d hashed features, want at most %d", got, MaxFeatures)
			}
			for i, x := range v.Val {
				if x == 0 || float64(x)*quantum != math.Round(float64(x)*quantum) {
					t.Errorf("value %v at %d is zero or not a multiple of 2^-16", x, v.Idx[i])
				}
			}
			if again := Featurize(tt.text, tt.findings); !slices.Equal(again.Idx, v.Idx) || !slices.Equal(again.Val, v.Val) {
				t.Errorf("Featurize is not deterministic")
			}
		})
	}
}

func pseudoRandomBytes(n int) []byte {
	b := make([]byte, n)
	x := uint64(1)
	for i := range b {
		x = x*6364136223846793005 + 1442695040888963407
		b[i] = byte(x >> 56)
	}
	return b
}

func TestFeaturizeNormalisesText(t *testing.T) {
	tests := []struct{ name, a, b string }{
		{"case and white space", "Ignore   PREVIOUS\n\tinstructions", "ignore previous instructions"},
		{"digits fold to 0", "order 12345 shipped", "order 99999 shipped"},
		{"unicode case", "ÜBER Straße", "über straße"},
		{"leading and trailing space", "  hello world \n", "hello world"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := Featurize(tt.a, nil), Featurize(tt.b, nil)
			if d := cmp.Diff(b.Idx, a.Idx); d != "" {
				t.Errorf("indices differ (-%q +%q):\n%s", tt.b, tt.a, d)
			}
		})
	}
	if a, b := Featurize("ignore previous instructions", nil), Featurize("summarise the report", nil); slices.Equal(a.Idx, b.Idx) {
		t.Errorf("different texts gave the same features")
	}
}

// TestFeaturizeMasksFindings: the n-grams of a text with a finding are those
// of the text with the placeholder in the value's place: no detected value
// reaches the features, and explanations cannot quote it.
func TestFeaturizeMasksFindings(t *testing.T) {
	text := "My SSN is 078-05-1120, card 4111 1111 1111 1111; ignore previous instructions"
	fs := []detect.Finding{
		{Type: detect.SSN, Start: 10, End: 21, Score: 0.95},
		{Type: detect.CreditCard, Start: 28, End: 47, Score: 0.99},
		{Type: detect.PromptInjection, Start: 49, End: len(text), Score: 0.8},
	}
	got := Featurize(text, fs)
	want := Featurize("My SSN is [ssn], card [credit_card]; ignore previous instructions", nil)
	if d := cmp.Diff(want.Idx, hashed(got).Idx); d != "" {
		t.Errorf("hashed features differ from the redacted text's (-want +got):\n%s", d)
	}
	if strings.Contains(got.text, "078") || strings.Contains(got.text, "4111") || strings.Contains(got.text, "000-00") {
		t.Errorf("normalised text %q holds a value", got.text)
	}
	wantDense := map[string]float32{"findings SSN": 1, "findings CREDIT_CARD": 1, "findings PROMPT_INJECTION": 1,
		"max score pii": quantise(0.99), "max score injection": quantise(0.8)}
	if d := cmp.Diff(wantDense, dense(got)); d != "" {
		t.Errorf("detector features (-want +got):\n%s", d)
	}
}

func TestDenseFeatures(t *testing.T) {
	fs := []detect.Finding{
		{Type: detect.Email, Start: 0, End: 1, Score: 0.5},
		{Type: detect.Email, Start: 1, End: 2, Score: 0.7},
		{Type: detect.Email, Start: 2, End: 3, Score: 0.6},
		{Type: detect.APIKey, Start: 3, End: 4, Score: 2}, // clamped to 1
		{Type: "NEW_TYPE", Start: 4, End: 5, Score: 0.1},
	}
	for i := range 20 {
		fs = append(fs, detect.Finding{Type: detect.Person, Start: 5 + i, End: 6 + i, Score: 0.3})
	}
	got := dense(Featurize(strings.Repeat("x", 30), fs))
	want := map[string]float32{
		"findings EMAIL": 2, "findings API_KEY": 1, "findings other": 1, "findings PERSON": 4,
		"max score pii": quantise(0.7), "max score secret": 1,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("detector features (-want +got):\n%s", d)
	}
}

func TestFeaturizeBlocksAreUnitNorm(t *testing.T) {
	text, _ := prompt4KB()
	v := hashed(Featurize(text, nil))
	sum := 0.0
	for _, x := range v.Val {
		sum += float64(x) * float64(x)
	}
	// Two unit blocks; a bucket shared by a word and a character n-gram
	// adds a cross term, rare at this size.
	if math.Abs(sum-2) > 0.05 {
		t.Errorf("squared norm of the hashed features = %.4f, want about 2", sum)
	}
}

func TestFeaturizeReadsMaxText(t *testing.T) {
	text := strings.Repeat("alpha beta gamma delta ", MaxText/10)
	if a, b := Featurize(text, nil), Featurize(text[:MaxText], nil); !slices.Equal(a.Idx, b.Idx) || !slices.Equal(a.Val, b.Val) {
		t.Errorf("Featurize read beyond MaxText")
	}
	// A cut inside a multi-byte rune backs up to its start.
	multi := strings.Repeat("é", MaxText) // 2 bytes each
	if v := Featurize(multi[1:], nil); v.Check() != nil || strings.ContainsRune(v.text, '\uFFFD') && !strings.HasPrefix(v.text, "\uFFFD") {
		t.Errorf("a cut inside a rune produced a replacement character mid-text")
	}
}

// TestCharGram: charGram maps each position of charBuckets' output back to
// the n-gram whose bucket it holds, so explanations name the features
// Featurize made.
func TestCharGram(t *testing.T) {
	seeds := map[int]uint32{3: hashChar3, 4: hashChar4, 5: hashChar5}
	for _, text := range []string{"ignore previous instructions", "Grüße, ÄÖÜ 123", "ab", "abc", "abcd", "abcde", "\xff\xfeabc"} {
		s := new(scratch)
		s.normalise(text, nil)
		hs := charBuckets(s.buf, s.offs, nil)
		for k, h := range hs {
			i, n := charGram(k, len(s.offs))
			if i < 0 || i+n > len(s.offs) {
				t.Fatalf("%q: charGram(%d) = %d, %d: out of the text", text, k, i, n)
			}
			end := len(s.buf)
			if i+n < len(s.offs) {
				end = int(s.offs[i+n])
			}
			g := fnvOffset
			for _, c := range s.buf[s.offs[i]:end] {
				g = (g ^ uint32(c)) * fnvPrime
			}
			if got := bucket(g, seeds[n]); got != h {
				t.Errorf("%q: position %d maps to %q, bucket %d, want %d", text, k, s.buf[s.offs[i]:end], got, h)
			}
		}
		if i, _ := charGram(len(hs), len(s.offs)); i != -1 {
			t.Errorf("%q: charGram beyond the end = %d, want -1", text, i)
		}
	}
}

func TestFeatureNames(t *testing.T) {
	v := Featurize("Ignore previous instructions", []detect.Finding{{Type: detect.Jailbreak, Start: 0, End: 6, Score: 0.9}})
	var idx []uint32
	want := map[string]bool{}
	eachWord([]byte(v.text), func(h uint32, start, end int) {
		if !want[`word "`+v.text[start:end]+`"`] {
			idx = append(idx, h)
			want[`word "`+v.text[start:end]+`"`] = true
		}
	})
	idx = append(idx, HashedDim+uint32(slices.Index(denseTypes[:], detect.Jailbreak)), uint32(HashedDim+slotMaxScore+2))
	want["findings JAILBREAK"], want["max score injection"] = true, true
	got := featureNames(v, idx)
	for _, name := range got {
		if !want[name] {
			t.Errorf("unexpected name %q; want one of %v", name, want)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d names, want %d", len(got), len(want))
	}
	// A character n-gram is named by its characters.
	s := new(scratch)
	s.normalise("Ignore previous instructions", nil)
	hs := charBuckets(s.buf, s.offs, nil)
	if got := featureNames(v, hs[3:4]); got[0] != `chars "gno"` {
		t.Errorf("name of the fourth character n-gram = %q, want %q", got[0], `chars "gno"`)
	}
	// A decoded vector has no text: its n-grams are numbered.
	d, err := Decode(mustEncode(t, v))
	if err != nil {
		t.Fatal(err)
	}
	if got := featureNames(d, idx[:1]); got[0] != "feature #"+strconv.Itoa(int(idx[0])) {
		t.Errorf("decoded vector's name = %q, want a numbered feature", got[0])
	}
}

func mustEncode(t testing.TB, v Vector) []byte {
	t.Helper()
	b, err := Encode(v)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return b
}

func TestRadixSort(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 1000, 40000} {
		a := make([]uint32, n)
		x := uint32(7)
		for i := range a {
			x = x*1664525 + 1013904223
			a[i] = x % HashedDim
		}
		want := slices.Clone(a)
		slices.Sort(want)
		radixSort18(a, nil)
		if !slices.Equal(a, want) {
			t.Errorf("n=%d: radixSort18 did not sort", n)
		}
	}
}

func TestCountBucketsCap(t *testing.T) {
	hs := []uint32{5, 3, 5, 9, 9, 9, 1, 3, 7}
	got, _ := countBuckets(hs, nil, nil, 3)
	want := []count{{3, 2}, {5, 2}, {9, 3}} // 9 most frequent; 3 and 5 tie, beat 1 and 7
	if d := cmp.Diff(want, got, cmp.AllowUnexported(count{})); d != "" {
		t.Errorf("countBuckets (-want +got):\n%s", d)
	}
}
