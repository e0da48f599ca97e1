package verify

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// agreeCase is one pair of prompts and whether they may share an answer; a
// pair that may not names the check that must refuse it.
type agreeCase struct {
	name   string
	cached string
	query  string
	reason string // "" when the two must agree
}

func runAgree(t *testing.T, cases []agreeCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, reason := Compare(c.query, c.cached)
			if ok != (c.reason == "") || reason != c.reason {
				t.Errorf("Compare(%q, %q) = %v, %q; want %v, %q\nquery:  %+v\ncached: %+v",
					c.query, c.cached, ok, reason, c.reason == "", c.reason, Extract(c.query), Extract(c.cached))
			}
		})
	}
}

func TestNumbers(t *testing.T) {
	runAgree(t, []agreeCase{
		{"same digits", "What is 15% of 200?", "what's 15% of 200", ""},
		{"other digits", "What is 15% of 200?", "What is 20% of 200?", "number"},
		{"thousands separator", "How much is 1,000 USD in euros?", "How much is 1000 USD in euros?", ""},
		{"list is not a thousands separator", "Sort 1,2,3", "Sort 123", "number"},
		{"word and digit", "Give me five ideas", "Give me 5 ideas", ""},
		{"compound word", "I am twenty five years old", "I am 25 years old", ""},
		{"hyphenated compound word", "I am twenty-five years old", "I am 25 years old", ""},
		{"other compound word", "I am twenty-five years old", "I am 26 years old", "number"},
		{"scale words", "Is one hundred and five a prime?", "Is 105 a prime?", ""},
		{"digits and scale word", "Invest 3 million dollars", "Invest 3,000,000 dollars", ""},
		{"a dozen", "Give me a dozen ideas", "Give me 12 ideas", ""},
		{"bare scale word", "Sum the first hundred integers", "Sum the first thousand integers", "number"},
		{"half", "How many cups are in a quart?", "How many cups are in a half gallon?", "number"},
		{"ordinal suffix and word", "What is the 3rd largest city?", "What is the third largest city?", ""},
		{"other ordinal", "What is the 3rd largest city?", "What is the 4th largest city?", "number"},
		{"percent word", "What is twenty five percent of 80", "What is 25% of 80", ""},
		{"percent or not", "Add 5% to the price", "Add 5 to the price", "number"},
		{"sign", "What is -5 squared?", "What is 5 squared?", "number"},
		{"minus word", "What is minus 5 squared?", "What is -5 squared?", ""},
		{"decimal", "Is 0.5 mg enough?", "Is 5 mg enough?", "number"},
		{"versions differ", "Install Python 3.11", "Install Python 3.12", "number"},
		{"version spelled with v", "What changed in v1.2?", "What changed in version 1.2?", ""},
		{"dotted versions", "Upgrade to 1.2.3", "Upgrade to 1.2.4", "number"},
		{"years", "Who won the World Cup in 2014?", "Who won the World Cup in 2018?", "number"},
		{"unit glued", "Convert 5km to miles", "Convert 5 km to miles", ""},
		{"thousands by k", "Is a $10k salary raise good?", "Is a $10,000 salary raise good?", ""},
		{"k is no multiplier without money", "What is a 401(k)?", "What is a 401k?", ""},
		{"times", "Set my alarm for 7:30", "Set my alarm for 6:30", "number"},
		{"fractions", "Which is bigger, 2/3 or 3/5?", "Which is bigger, 2/3 or 3/4?", "number"},
		{"soft one matches 1", "Merge into one file", "Merge into 1 file", ""},
		{"soft one matches nothing", "Which one is better, Vim or Emacs?", "Which is better, Vim or Emacs?", ""},
		{"soft one is not 2", "Merge into one file", "Merge into 2 files", "number"},
		{"missing number", "Compare two strings", "Compare strings", "number"},
		{"twice", "Why does my component render twice?", "Why does my component render 2 times?", ""},
		{"once", "Run the job once a day", "Run the job 1 time a day", ""},
		{"dates", "What happened on 2024-05-01?", "What happened on 2024-05-02?", "number"},
	})
}

func TestNegation(t *testing.T) {
	runAgree(t, []agreeCase{
		{"contraction and not", "Why can't I log in?", "Why can I not log in?", ""},
		{"cannot and can't", "I cannot log in", "I can't log in", ""},
		{"added not", "How to log in", "How not to log in", "negation"},
		{"n't", "Why does my laptop charge?", "Why doesn't my laptop charge?", "negation"},
		{"without", "Make a cake with eggs", "Make a cake without eggs", "negation"},
		{"never", "Should I use a VPN?", "Should I never use a VPN?", "negation"},
		{"no", "Find users with a profile picture", "Find users with no profile picture", "negation"},
		{"none", "Which of these are prime?", "Which of these are prime, if none?", "negation"},
		{"typed without apostrophe", "Why doesn't it work?", "why doesnt it work", ""},
		{"neither", "Do I need a visa or a passport?", "Do I need neither a visa nor a passport?", "negation"},
		{"both negated", "Why won't my car start?", "Why doesn't my car start?", ""},
		{"unable", "I can't log in to Outlook", "I'm unable to log in to Outlook", ""},
		{"impossible", "Is it possible to recover the file?", "Is it impossible to recover the file?", "negation"},
		{"german", "Warum startet mein Auto?", "Warum startet mein Auto nicht?", "negation"},
	})
}

func TestQuotedAndCode(t *testing.T) {
	runAgree(t, []agreeCase{
		{"same quote, other marks", `What does "carpe diem" mean?`, "What does 'carpe diem' mean?", ""},
		{"curly quotes", `What does "carpe diem" mean?`, "What does “carpe diem” mean?", ""},
		{"other quote", `What does "carpe diem" mean?`, `What does "carpe noctem" mean?`, "quoted"},
		{"one quoted word or none", `Translate "hello" to French`, "Translate hello to French", ""},
		{"one quoted word not in the other", `Translate "hello" to French`, "Translate goodbye to French", "quoted"},
		{"quoted phrase or none", `Translate "good morning" to French`, "Translate good morning to French", "quoted"},
		{"code is case-sensitive", "What does `getUser` return?", "What does `getuser` return?", "quoted"},
		{"other backticks", "What does `ls -la` do?", "What does `ls -lh` do?", "quoted"},
		{"apostrophes are not quotes", "Why don't my users' sessions expire?", "Why don't my users' sessions expire", ""},
		{"file paths", "Where is /etc/hosts?", "Where is /etc/passwd?", "code"},
		{"file names", "Delete config.yaml from git history", "Delete secrets.env from git history", "code"},
		{"URLs", "What is at https://example.com/docs?", "What is at https://example.com/api?", "code"},
		{"emails", "Email support@example.com", "Email billing@example.com", "code"},
		{"snake_case", "What does user_id store?", "What does account_id store?", "code"},
		{"flags", "What does git push --force do?", "What does git push --force-with-lease do?", "code"},
		{"same flag", "what does git push --force do", "What does git push --force do?", ""},
		{"CamelCase identifiers", "What does getUserName return?", "What does getUserEmail return?", "entity"},
		{"same CamelCase identifier", "What does getUserName return?", "what does getUserName return", ""},
		{"calls", "How do I call get_user_name()?", "How do I call get_user_email()?", "code"},
	})
}

func TestEntities(t *testing.T) {
	runAgree(t, []agreeCase{
		{"cities", "What's the weather in Paris?", "What's the weather in London?", "entity"},
		{"multi-word names", "What is the population of New York?", "What is the population of New Jersey?", "entity"},
		{"acronyms", "How does GDPR affect my business?", "How does HIPAA affect my business?", "entity"},
		{"case-insensitive", "How do I deploy to AWS Lambda?", "how do i deploy to aws lambda", ""},
		{"sentence start is not a name", "Reset my password", "How do I reset my password?", ""},
		{"I is not a name", "How can I reset my password?", "how can i reset my password", ""},
		{"title case", "How To Reset My Password", "how do i reset my password", ""},
		{"lower-case cities", "how far is paris from london", "how far is paris from berlin", "entity"},
		{"lower-case days", "is the store open on sunday", "Is the store open on Sunday?", ""},
		{"lower-case known names", "how do i reverse a list in python", "how do i reverse a list in ruby", "entity"},
		{"CamelCase names", "Is JavaScript single-threaded?", "Is TypeScript single-threaded?", "entity"},
		{"aliases", "How do I write tests in Go?", "How do I write tests in Golang?", ""},
		{"hyphenated name", "My Wi-Fi keeps dropping", "my wifi keeps dropping", ""},
		{"possessive of a known name", "Could you tell me what the population of Canada is?", "What is Canada's population?", ""},
		{"addressee", "Hi Claude, how do I reset my password?", "How do I reset my password?", ""},
		{"possessive", "Who is Einstein's wife?", "Who is the wife of Einstein?", ""},
		{"added name", "What is the theory of relativity?", "What is Einstein's theory of relativity?", "entity"},
		{"names with digits", "Compare EC2 and S3 pricing", "Compare EC2 and EBS pricing", "entity"},
		{"companies", "Who founded Microsoft?", "Who founded Apple?", "entity"},
		{"currencies", "Exchange rate of the dollar and the euro", "Exchange rate of the dollar and the yen", "entity"},
	})
}

func TestLanguage(t *testing.T) {
	runAgree(t, []agreeCase{
		{"spanish", "How do I reset my password?", "¿Cómo restablezco mi contraseña?", "language"},
		{"french", "Where is my order?", "Où est ma commande ?", "language"},
		{"german", "What is the capital of France?", "Was ist die Hauptstadt von Frankreich?", "language"},
		{"italian", "Why is the sky blue?", "Perché il cielo è blu?", "language"},
		{"portuguese and spanish", "¿Dónde está mi pedido?", "Onde está o meu pedido?", "language"},
		{"dutch", "How long should I boil an egg?", "Hoe lang moet ik een ei koken?", "language"},
		{"chinese", "How do I reset my password?", "如何重置我的密码？", "language"},
		{"japanese and chinese", "パスワードをリセットするにはどうすればいいですか？", "如何重置我的密码？", "language"},
		{"russian", "Why is the sky blue?", "Почему небо голубое?", "language"},
		{"korean", "How do I cancel my subscription?", "구독을 취소하려면 어떻게 해야 하나요?", "language"},
		{"same language", "Wie kann ich mein Passwort zurücksetzen?", "Wie setze ich mein Passwort zurück?", ""},
		{"too short to tell", "Hola", "Hello", ""},
		{"short but clear", "Can dogs eat grapes?", "¿Pueden los perros comer uvas?", "language"},
		{"quoted foreign words", `How do I say "je ne sais pas" in English?`, `What does "je ne sais pas" mean in English?`, ""},
		{"quoted English words", `How do you say "where is the station" in French?`, `Comment dit-on "where is the station" en français ?`, "language"},
		{"a foreign name is not a language", "What does the French word croissant mean?", "What does croissant mean in French?", ""},
	})
}

func TestAntonyms(t *testing.T) {
	runAgree(t, []agreeCase{
		{"size", "What is the largest planet?", "What is the smallest planet?", "antonym"},
		{"same pole", "What is the largest planet?", "What is the biggest planet?", ""},
		{"one side only", "How do I make the font bigger?", "How do I increase the font size?", ""},
		{"change", "How do I increase the font size?", "How do I decrease the font size?", "antonym"},
		{"two-word markers", "How do I enable dark mode?", "How do I turn off dark mode?", "antonym"},
		{"trade", "Should I buy Bitcoin now?", "Should I sell Bitcoin now?", "antonym"},
		{"time", "What should I eat before a run?", "What should I eat after a run?", "antonym"},
		{"extremes", "What is the maximum value of an int?", "What is the minimum value of an int?", "antonym"},
		{"particles", "How do I zoom in on a Mac?", "How do I zoom out on a Mac?", "antonym"},
		{"session", "How do I log in?", "How do I log out?", "antonym"},
		{"right and wrong", "Is this the right way to store passwords?", "Is this the wrong way to store passwords?", "antonym"},
		{"right and correct", "Is this the right way to store passwords?", "Is this the correct way to store passwords?", ""},
		{"am and pm", "My flight is at 6am", "My flight is at 6pm", "antonym"},
	})
}

func TestDirection(t *testing.T) {
	runAgree(t, []agreeCase{
		{"swapped", "Transfer money from Revolut to Wise", "Transfer money from Wise to Revolut", "direction"},
		{"swapped without from", "Convert USD to EUR", "Convert EUR to USD", "direction"},
		{"swapped common nouns", "Convert celsius to fahrenheit", "Convert fahrenheit to celsius", "direction"},
		{"reordered", "How do I get to the Louvre from the Eiffel Tower?", "Directions from the Eiffel Tower to the Louvre", ""},
		{"one side only", "Flights from Boston to Chicago", "Boston to Chicago flights", ""},
		{"infinitive to", "I want to move money from savings to checking", "I want to move money to checking from savings", ""},
	})
}

func TestFeaturesJSONRoundTrip(t *testing.T) {
	f := Extract(`Why can't I push 3 commits to "main" on GitHub with --force, in New York?`)
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var g Features
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, g); diff != "" {
		t.Errorf("JSON round trip changed the features (-before +after):\n%s", diff)
	}
	if ok, reason := Agree(g, f); !ok {
		t.Errorf("Agree(features, their round trip) = false, %q; want true", reason)
	}
}

func TestExtract(t *testing.T) {
	got := Extract(`Why can't I push 3 commits to "main" on GitHub with --force, in New York?`)
	want := Features{
		Numbers:   []string{"3"},
		Negations: 1,
		Quoted:    []string{"main"},
		Code:      []string{"--force"},
		Entities:  []string{"github", "new", "york"},
		Words:     []string{"can't", "commit", "github", "i", "in", "main", "new", "on", "push", "to", "why", "with", "york"},
		Poles:     []string{"push:a"},
		Roles:     []string{"from:commit", "to:main"},
		Lang:      "en",
		Content:   []string{"github", "york"},
		Rest:      []string{"commit", "main", "new", "push:a"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Extract: (-want +got):\n%s", diff)
	}
}

// TestContent: prompts that each name a thing the other does not are
// refused; a thing named on one side only, synonyms the embedder folds,
// inflections, typos and the wording of a request are not a difference.
func TestContent(t *testing.T) {
	tests := []struct {
		cached, query string
		want          bool
	}{
		{"delete a question", "delete an answer", false},
		{"go sdk hello 3", "go sdk stream 3", false},
		{"How do I delete a comment on Reddit?", "How do I delete a post on Reddit?", false},
		{"How do I freeze a row in Excel?", "How do I freeze a column in Excel?", false},
		{"Give me an example of irony.", "Give me a definition of irony.", false},

		{"How do I install a package with pip?", "How to install a Python package using pip", true},
		{"How do I delete a question?", "How can I remove my questions?", true},
		{"What is a good film to watch tonight?", "Recommend a good movie to watch tonight", true},
		{"How do I reset my pasword?", "How do I reset my password?", true},
		{"What's the best way to learn Go?", "Steps to learn Go", true},
		{"Hello! How do I exit vim?", "Hi, how do I exit vim?", true},
		{"Is this the correct way to store passwords?", "Is this the right way to store passwords?", true},
		// Other languages are left to the other checks.
		{"¿Cómo borro una pregunta?", "¿Cómo borro una respuesta?", true},
	}
	for _, tt := range tests {
		ok, reason := Compare(tt.query, tt.cached)
		if ok != tt.want && (ok || reason == "content") {
			t.Errorf("Compare(%q, %q) = %v, %q; want %v (content: %v | %v)", tt.query, tt.cached, ok, reason, tt.want,
				Extract(tt.query).Content, Extract(tt.cached).Content)
		}
	}
}

func TestEmpty(t *testing.T) {
	for _, s := range []string{"", "   ", "?!", "`", `"unclosed`} {
		if ok, reason := Compare(s, s); !ok {
			t.Errorf("Compare(%q, itself) = false, %q; want true", s, reason)
		}
	}
}

// prompt is a 30-word prompt, for the benchmark.
const prompt = "Hi! Could you please explain why my Python script can't read the 2,000 rows of data.csv from S3 " +
	"when I run it in New York with the --fast flag?"

func BenchmarkExtract(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Extract(prompt)
	}
}

func BenchmarkAgree(b *testing.B) {
	q, c := Extract(prompt), Extract(prompt+" Thanks")
	b.ReportAllocs()
	for b.Loop() {
		Agree(q, c)
	}
}
