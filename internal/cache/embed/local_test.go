package embed

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
)

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestLocalUnitLength(t *testing.T) {
	l := NewLocal()
	for _, text := range []string{
		"How do I reset my password?",
		"how do i?", // only stop words
		"a",
		"3.14159",
		"Ünïcödé straße ΑΘΗΝΑ",
		"東京の天気はどうですか",
		"don't won't can't",
		strings.Repeat("lorem ipsum dolor sit amet ", 500),
		"bad \xff utf-8 \xc3 bytes",
		strings.Repeat("QUJD", 5000), // one long token
		strings.Repeat("word ", 50000),
	} {
		v := l.EmbedOne(text)
		if len(v) != l.Dim() {
			t.Fatalf("len(EmbedOne(%q)) = %d, want %d", text, len(v), l.Dim())
		}
		if n := norm(v); math.Abs(n-1) > 1e-4 {
			t.Errorf("|EmbedOne(%q)| = %v, want 1", text, n)
		}
	}
}

func TestLocalEmptyIsZero(t *testing.T) {
	l := NewLocal()
	for _, text := range []string{"", "   ", "?!...", "\n\t"} {
		if n := norm(l.EmbedOne(text)); n != 0 {
			t.Errorf("|EmbedOne(%q)| = %v, want 0", text, n)
		}
	}
}

func TestLocalDeterministic(t *testing.T) {
	a, b := NewLocal(), NewLocal()
	for _, text := range []string{"How do I reset my password?", "Write a poem about the ocean"} {
		va, vb, vc := a.EmbedOne(text), b.EmbedOne(text), a.EmbedOne(text)
		for i := range va {
			if va[i] != vb[i] || va[i] != vc[i] {
				t.Fatalf("EmbedOne(%q)[%d] = %v, %v, %v: want equal", text, i, va[i], vb[i], vc[i])
			}
		}
	}
}

func TestLocalEmbedMatchesEmbedOne(t *testing.T) {
	l := NewLocal()
	texts := []string{"first text", "", "second text"}
	vs, err := l.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors, want %d", len(vs), len(texts))
	}
	for i, text := range texts {
		if got := Cosine(vs[i], l.EmbedOne(text)); text != "" && math.Abs(float64(got)-1) > 1e-5 {
			t.Errorf("Embed()[%d] · EmbedOne(%q) = %v, want 1", i, text, got)
		}
	}
}

func TestLocalConcurrent(t *testing.T) {
	l := NewLocal()
	texts := []string{"How do I reset my password?", "What is the capital of France?", "Explain TCP vs UDP"}
	want := make([][]float32, len(texts))
	for i, text := range texts {
		want[i] = l.EmbedOne(text)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 50 {
				i := (g + n) % len(texts)
				if got := Cosine(l.EmbedOne(texts[i]), want[i]); math.Abs(float64(got)-1) > 1e-5 {
					t.Errorf("concurrent EmbedOne(%q) · serial = %v, want 1", texts[i], got)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestSynonymsFold(t *testing.T) {
	l := NewLocal()
	for _, p := range [][2]string{
		{"car", "automobile"},
		{"buy", "purchase"},
		{"big", "large"},
		{"start", "begin"},
		{"mistake", "error"},
		{"movie", "film"},
		{"children", "child"}, // irregular plural
		{"colour", "color"},   // British spelling
		{"summarised", "summarized"},
		{"velocity", "speed"},
	} {
		if got := Cosine(l.EmbedOne(p[0]), l.EmbedOne(p[1])); got < 0.999 {
			t.Errorf("similarity(%q, %q) = %.3f, want 1", p[0], p[1], got)
		}
	}
	// Words with distinct everyday senses must stay apart, including words
	// protected from their WordNet first sense and proper names.
	for _, p := range [][2]string{
		{"java", "coffee"},
		{"python", "snake"},
		{"program", "plan"},
		{"sort", "kind"},
		{"travel", "move"},
		{"Who wrote Hamlet", "Who wrote crossroads"},
		{"car", "train"},
	} {
		if got := Cosine(l.EmbedOne(p[0]), l.EmbedOne(p[1])); got > 0.5 {
			t.Errorf("similarity(%q, %q) = %.3f, want ≤ 0.5", p[0], p[1], got)
		}
	}
}

func TestFolding(t *testing.T) {
	l := NewLocal()
	for _, p := range [][2]string{
		{"merge two dicts in Golang", "merge 2 dictionaries in Go"}, // aliases, number names
		{"whats the capital of peru", "What is the capital of Peru?"},
		{"How do I reset my pasword?", "How do I reset my password?"},  // a letter left out
		{"How do I reset my passwrod?", "How do I reset my password?"}, // two swapped
		{"How does compound interest work?", "Explain how compound interest works"},
	} {
		if got := Cosine(l.EmbedOne(p[0]), l.EmbedOne(p[1])); got < 0.99 {
			t.Errorf("similarity(%q, %q) = %.3f, want ≈ 1", p[0], p[1], got)
		}
	}
}

func TestWordOrderWithRelation(t *testing.T) {
	l := NewLocal()
	a, b := "convert a string to an integer", "convert an integer to a string"
	if got := Cosine(l.EmbedOne(a), l.EmbedOne(b)); got >= 0.9 {
		t.Errorf("similarity(%q, %q) = %.3f, want < 0.9", a, b, got)
	}
}

func TestLexiconLoads(t *testing.T) {
	lex := lexicon().words
	if len(lex) < 50000 {
		t.Fatalf("lexicon has %d words, want ≥ 50000", len(lex))
	}
	for w, want := range map[string]string{"automobile": "car", "car": "car", "went": "go"} {
		if e, ok := lex[w]; !ok || e.canon != want {
			t.Errorf("lexicon[%q] = %+v, %v; want canonical %q", w, e, ok, want)
		}
	}
}

func TestLookupInflections(t *testing.T) {
	lex := lexicon().words
	for in, want := range map[string]string{
		"automobiles": "car",
		"purchased":   "buy",
		"velocities":  "speed",
		"mistakes":    "error",
		"boxes":       "box",
		"classes":     "class",
	} {
		e, ok := lookup(lex, []byte(in))
		if !ok || e.canon != want {
			t.Errorf("lookup(%q) = %+v, %v; want canonical %q", in, e, ok, want)
		}
	}
	if e, ok := lookup(lex, []byte("kubernetes")); ok {
		t.Errorf("lookup(kubernetes) = %+v, want none", e)
	}
}

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"How do I reset my password?", "how do i reset my password"},
		{"What's the e-mail of O'Brien's team", "what the email of obrien team"},
		{"I don't know; it isn't 3.14 or 1,000", "i do* know it is* 3.14 or 1000"},
		{"Ünïcödé  STRASSE", "ünïcödé strasse"},
		{"It’s fine", "it fine"},
		{"Read it line-by-line, by e-mail", "read it line by line by email"},
		{"I dont know, it isnt", "i dont* know it isnt*"},
		{"東京の天気", "東 京 の 天 気"},
	} {
		buf, toks := tokenize(tc.in, nil, nil)
		var words []string
		for _, tk := range toks {
			w := string(buf[tk.start:tk.end])
			if tk.neg {
				w += "*"
			}
			words = append(words, w)
		}
		if got := strings.Join(words, " "); got != tc.want {
			t.Errorf("tokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStem(t *testing.T) {
	// From Porter's published vocabulary and output.
	for in, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "cats": "cat", "feed": "feed",
		"agreed": "agre", "plastered": "plaster", "motoring": "motor",
		"sing": "sing", "conflated": "conflat", "troubled": "troubl",
		"sized": "size", "hopping": "hop", "falling": "fall", "filing": "file",
		"happy": "happi", "relational": "relat", "conditional": "condit",
		"rational": "ration", "valenci": "valenc", "digitizer": "digit",
		"conformabli": "conform", "radicalli": "radic", "differentli": "differ",
		"vileli": "vile", "analogousli": "analog", "vietnamization": "vietnam",
		"predication": "predic", "operator": "oper", "feudalism": "feudal",
		"decisiveness": "decis", "hopefulness": "hope", "callousness": "callous",
		"formaliti": "formal", "sensitiviti": "sensit", "sensibiliti": "sensibl",
		"triplicate": "triplic", "formative": "form", "formalize": "formal",
		"electriciti": "electr", "electrical": "electr", "hopeful": "hope",
		"goodness": "good", "revival": "reviv", "allowance": "allow",
		"inference": "infer", "airliner": "airlin", "gyroscopic": "gyroscop",
		"adjustable": "adjust", "defensible": "defens", "irritant": "irrit",
		"replacement": "replac", "adjustment": "adjust", "dependent": "depend",
		"adoption": "adopt", "homologou": "homolog", "communism": "commun",
		"activate": "activ", "angulariti": "angular", "homologous": "homolog",
		"effective": "effect", "bowdlerize": "bowdler", "probate": "probat",
		"rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll",
		"generalizations": "gener", "oscillators": "oscil",
	} {
		if got := string(stem([]byte(in))); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkLocalEmbed(b *testing.B) {
	l := NewLocal()
	text := "Can you please explain how I should configure an nginx reverse proxy in front of two Go services, " +
		"with HTTPS certificates renewed automatically and requests balanced between them?"
	l.EmbedOne(text) // decode the lexicon outside the timing
	b.ReportAllocs()
	for b.Loop() {
		l.EmbedOne(text)
	}
}

func TestSortHashes(t *testing.T) {
	hs := []uint64{5, 1 << 63, 3, 1<<48 + 2, 1 << 48, 7, 1 << 63, 0}
	want := slices.Sorted(slices.Values(hs))
	if got := sortHashes(hs); !slices.Equal(got, want) {
		t.Errorf("sortHashes = %v, want %v", got, want)
	}
}

func BenchmarkLexiconDecode(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		newLexiconData(parseLexicon(lexiconGz))
	}
}
