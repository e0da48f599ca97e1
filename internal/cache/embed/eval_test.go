package embed

import (
	"fmt"
	"os"
	"sort"
	"testing"
)

// evalGroups are questions in groups: the questions of a group ask the same
// thing; questions of different groups do not, and neighbouring groups are
// often on the same topic (hard negatives). TestEvalGroups scores Local on
// them; set EMBED_EVAL=1 to print every figure.
var evalGroups = [][]string{
	{"How do I reset my password?", "What's the way to reset my password", "I forgot my password, how can I reset it?", "password reset steps"},
	{"How do I change my username?", "How can I change my user name?", "Is it possible to change my username?"},
	{"How do I delete my account?", "How can I close my account permanently?", "I want to delete my account"},
	{"What is the capital of France?", "Tell me the capital of France.", "what's france's capital", "Which city is the capital of France?"},
	{"What is the capital of Germany?", "Which city is Germany's capital?"},
	{"What is the population of France?", "How many people live in France?"},
	{"How do I reverse a list in Python?", "Python: how to reverse a list", "reversing a list in python"},
	{"How do I sort a list in Python?", "Python sort list", "How can I sort a Python list?"},
	{"How do I reverse a string in JavaScript?", "javascript reverse string", "How can I reverse a string using JavaScript?"},
	{"How do I read a file in Go?", "Reading a file in Go", "how to read a file in golang"},
	{"How do I write to a file in Go?", "Writing to a file in Go"},
	{"What is a neural network?", "Could you explain what a neural network is?", "Explain neural networks"},
	{"How do I train a neural network?", "Training a neural network, step by step"},
	{"What is the difference between TCP and UDP?", "Explain the difference between TCP and UDP", "TCP vs UDP differences"},
	{"How do I install Docker on Ubuntu?", "Installing docker on ubuntu", "Install Docker on Ubuntu 22.04 how?"},
	{"How do I install Node.js on Windows?", "Installing Node.js on Windows"},
	{"How do I center a div in CSS?", "How to center a div with CSS", "CSS: centering a div"},
	{"How do I delete a git branch?", "How can I delete a branch in git?", "git delete branch"},
	{"How do I undo the last git commit?", "How can I revert my last commit in git?", "undo last commit git"},
	{"How do I buy a car?", "How do I purchase an automobile?", "Tips for buying a car"},
	{"How do I sell my car?", "What's the best way to sell a car?"},
	{"How do I fix a flat tire?", "How can I repair a flat tire?", "fixing a flat tyre"},
	{"What are the symptoms of diabetes?", "What are symptoms of diabetes", "diabetes symptoms", "signs of diabetes"},
	{"How is diabetes treated?", "What is the treatment for diabetes?"},
	{"What are the symptoms of the flu?", "flu symptoms"},
	{"Write a poem about the ocean", "Could you write me a poem about the ocean?", "Compose a poem about the sea"},
	{"Write a poem about love", "Write me a love poem"},
	{"Write a short story about a dragon", "Tell me a short story about a dragon"},
	{"How many calories are in a banana?", "how many calories does a banana have", "banana calorie count"},
	{"How many calories are in an apple?", "calories in an apple"},
	{"What is the boiling point of water?", "what's water's boiling point", "At what temperature does water boil?"},
	{"What is the freezing point of water?", "At what temperature does water freeze?"},
	{"What is the speed of light?", "What's the velocity of light?", "How fast does light travel?"},
	{"What is the speed of sound?", "How fast does sound travel?"},
	{"Who wrote Pride and Prejudice?", "Who is the author of Pride and Prejudice?", "Pride and Prejudice author"},
	{"Who wrote Hamlet?", "Who is the author of Hamlet?"},
	{"Summarize the plot of Hamlet", "Please summarize the plot of Hamlet.", "Can you summarise the plot of Hamlet?"},
	{"How do I start a business?", "How do I begin a business?", "Starting a business: where do I begin?"},
	{"How do I start a podcast?", "Starting a podcast"},
	{"What causes earthquakes?", "what causes an earthquake", "Why do earthquakes happen?"},
	{"What causes inflation?", "Why does inflation happen?", "causes of inflation"},
	{"How do I configure nginx as a reverse proxy?", "configuring nginx as reverse proxy", "Set up nginx as a reverse proxy"},
	{"How do I enable HTTPS in nginx?", "Configure SSL on nginx"},
	{"Translate 'good morning' into German", "Translate good morning to German"},
	{"Translate 'thank you' into Japanese", "How do you say thank you in Japanese?"},
	{"What is the best way to learn Spanish?", "How should I learn Spanish?", "Tips for learning Spanish"},
	{"What is the best way to learn French?", "How can I learn French quickly?"},
	{"Recommend a good science fiction book", "Can you suggest a good sci-fi novel?", "Good science fiction books?"},
	{"Recommend a good Italian restaurant", "Suggest an Italian restaurant"},
	{"How do I lose weight?", "What's the best way to lose weight?", "Tips for losing weight"},
	{"How do I gain muscle?", "How can I build muscle?"},
	{"What is photosynthesis?", "Explain photosynthesis", "How does photosynthesis work?"},
	{"What is the meaning of life?", "What's the meaning of life"},
	{"How do I make a cake?", "How do I bake a cake?", "Cake recipe"},
	{"How do I make bread?", "How do I bake bread?", "Bread recipe"},
	{"Give me a recipe for chocolate chip cookies", "chocolate chip cookie recipe", "How do I make chocolate chip cookies?"},
	{"How do I cook rice?", "How to cook rice", "What's the best way to cook rice?"},
	{"Write a SQL query to find duplicate rows", "SQL query that finds duplicate rows", "How do I find duplicate rows in SQL?"},
	{"Write a SQL query to delete duplicate rows", "How do I remove duplicate rows in SQL?"},
	{"Explain quantum entanglement", "What is quantum entanglement?"},
	{"Explain the French revolution", "What was the French Revolution?"},
	{"How many moons does Jupiter have?", "Number of moons of Jupiter", "How many moons orbit Jupiter?"},
	{"How many moons does Saturn have?", "Number of moons of Saturn"},
	{"What's the weather like in Paris in spring?", "Paris weather in spring"},
	{"How do I convert a string to an integer in Go?", "how to convert string to integer in go", "Go: convert string to int"},
	{"How do I convert an integer to a string in Go?", "Go int to string conversion"},
	{"What is Kubernetes?", "Explain Kubernetes", "What is k8s?"},
	{"How do I scale a Kubernetes deployment?", "Scale a deployment in Kubernetes"},
	{"What is the difference between a virus and bacteria?", "Virus vs bacteria: what's the difference?"},
	{"How do I improve my sleep?", "How can I sleep better?", "Tips for better sleep"},
	{"How do I get a refund?", "How can I request a refund?", "I want my money back"},
	{"How do I cancel my subscription?", "How can I cancel my subscription?", "Cancel subscription"},
	{"How do I update my credit card?", "How do I change my payment method?"},
}

// evalScores returns the similarity of every pair of questions in one group
// (pos) and in different groups (neg).
func evalScores(l *Local) (pos, neg []float32, posPairs, negPairs [][2]string) {
	type q struct {
		g int
		t string
		v []float32
	}
	var qs []q
	for g, grp := range evalGroups {
		for _, t := range grp {
			qs = append(qs, q{g, t, l.EmbedOne(t)})
		}
	}
	for i := range qs {
		for j := i + 1; j < len(qs); j++ {
			s := Cosine(qs[i].v, qs[j].v)
			if qs[i].g == qs[j].g {
				pos = append(pos, s)
				posPairs = append(posPairs, [2]string{qs[i].t, qs[j].t})
			} else {
				neg = append(neg, s)
				negPairs = append(negPairs, [2]string{qs[i].t, qs[j].t})
			}
		}
	}
	return pos, neg, posPairs, negPairs
}

func TestEvalGroups(t *testing.T) {
	pos, neg, pp, np := evalScores(NewLocal())
	count := func(xs []float32, th float32) int {
		n := 0
		for _, x := range xs {
			if x >= th {
				n++
			}
		}
		return n
	}
	recall := float64(count(pos, 0.90)) / float64(len(pos))
	fp := count(neg, 0.90)
	if os.Getenv("EMBED_EVAL") != "" {
		for _, th := range []float32{0.7, 0.8, 0.85, 0.9, 0.95} {
			fmt.Printf("threshold %.2f: recall %d/%d, false positives %d/%d\n", th, count(pos, th), len(pos), count(neg, th), len(neg))
		}
		type pair struct {
			s    float32
			a, b string
		}
		var ps, ns []pair
		for i, s := range pos {
			ps = append(ps, pair{s, pp[i][0], pp[i][1]})
		}
		for i, s := range neg {
			ns = append(ns, pair{s, np[i][0], np[i][1]})
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i].s < ps[j].s })
		sort.Slice(ns, func(i, j int) bool { return ns[i].s > ns[j].s })
		fmt.Println("lowest paraphrases:")
		for _, p := range ps[:min(40, len(ps))] {
			fmt.Printf("  %.3f %q %q\n", p.s, p.a, p.b)
		}
		fmt.Println("highest non-paraphrases:")
		for _, p := range ns[:min(25, len(ns))] {
			fmt.Printf("  %.3f %q %q\n", p.s, p.a, p.b)
		}
	}
	// Bounds a little beyond the measured figures (recall 0.58; 3 false
	// positives, all "What is a neural network?" against "How do I train a
	// neural network?", train being a common word in WordNet's counts), so
	// that a change that loses recall or precision fails here.
	if recall < 0.55 {
		t.Errorf("recall at 0.90 = %.2f, want ≥ 0.55", recall)
	}
	if fp > 3 {
		t.Errorf("%d pairs of different questions at ≥ 0.90, want ≤ 3", fp)
	}
}
