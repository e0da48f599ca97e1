package embed

import (
	"testing"
)

// paraphrases are pairs that ask the same thing, and that Local must place at
// or above the cache's default threshold.
var paraphrases = [][2]string{
	{"How do I reset my password?", "What's the way to reset my password"},
	{"How do I reset my password?", "how can i reset my password"},
	{"Can you tell me how to reset my password please?", "Reset password"},
	{"What is the capital of France?", "Tell me the capital of France."},
	{"What is the capital of France?", "what's france's capital"},
	{"Could you explain what a neural network is?", "What is a neural network?"},
	{"How do I reverse a list in Python?", "Python: how to reverse a list"},
	{"How can I reverse a list in python", "reversing a list in Python"},
	{"What's the best way to learn Spanish?", "How should I learn Spanish?"},
	{"Please summarize the plot of Hamlet.", "Can you summarise the plot of Hamlet?"},
	{"How do I buy a car?", "How do I purchase an automobile?"},
	{"What is a big dog breed?", "What's a large dog breed?"},
	{"How do I fix a flat tire?", "How can I repair a flat tire?"},
	{"Translate 'good morning' into German", "Translate good morning to German, please"},
	{"What are the symptoms of diabetes?", "What are symptoms of diabetes"},
	{"Write a poem about the ocean", "Could you write me a poem about the ocean?"},
	{"How do I install Docker on Ubuntu?", "Installing docker on ubuntu"},
	{"How many calories are in a banana?", "how many calories does a banana have"},
	{"What is the boiling point of water?", "what's water's boiling point"},
	{"How to center a div in CSS", "How do I center a div with CSS?"},
	{"Explain the difference between TCP and UDP", "What is the difference between TCP and UDP?"},
	{"How do I convert a string to an integer in Go?", "how to convert string to integer in go"},
	{"What is the speed of light?", "What's the velocity of light?"},
	{"How do I delete a git branch?", "How can I delete a branch in git?"},
	{"Give me a recipe for chocolate chip cookies", "chocolate chip cookie recipe"},
	{"Who wrote Pride and Prejudice?", "Who was it that wrote Pride and Prejudice?"},
	{"How do I cancel my subscription?", "cancel subscription"},
	{"How do I convert a string to an integer in Go?", "Go: convert a string to an integer"},
	{"How do I start a business?", "How do I begin a business?"},
	{"What causes earthquakes?", "what causes an earthquake"},
	{"How do I reset my pasword?", "How do I reset my password?"},
	{"How do I configure nginx as a reverse proxy?", "configuring nginx as reverse proxy"},
}

// unrelated are pairs that ask different things, and that Local must keep
// well apart.
var unrelated = [][2]string{
	{"How do I reset my password?", "What is the capital of France?"},
	{"How do I reverse a list in Python?", "How do I install Docker on Ubuntu?"},
	{"What are the symptoms of diabetes?", "Write a poem about the ocean"},
	{"How do I buy a car?", "How do I bake bread?"},
	{"What is the speed of light?", "Who wrote Pride and Prejudice?"},
	{"How do I delete a git branch?", "How do I delete my Facebook account?"},
	{"Explain quantum entanglement", "Explain the French revolution"},
	{"What is the boiling point of water?", "What is the population of Tokyo?"},
	{"Translate 'good morning' into German", "Summarize the plot of Hamlet"},
	{"How do I center a div in CSS", "How do I cook rice?"},
	{"How many calories are in a banana?", "How many moons does Jupiter have?"},
	{"What causes earthquakes?", "What causes inflation?"},
	{"Write a haiku about autumn", "Write a SQL query to find duplicate rows"},
	{"How do I configure nginx as a reverse proxy?", "How do I train a neural network?"},
	{"Recommend a good science fiction book", "Recommend a good Italian restaurant"},
	{"What is the best programming language for beginners?", "What is the best way to lose weight?"},
}

func TestParaphrasesAreNear(t *testing.T) {
	l := NewLocal()
	for _, p := range paraphrases {
		if got := Cosine(l.EmbedOne(p[0]), l.EmbedOne(p[1])); got < 0.90 {
			t.Errorf("similarity(%q, %q) = %.3f, want ≥ 0.90", p[0], p[1], got)
		}
	}
}

func TestUnrelatedAreFar(t *testing.T) {
	l := NewLocal()
	for _, p := range unrelated {
		if got := Cosine(l.EmbedOne(p[0]), l.EmbedOne(p[1])); got >= 0.5 {
			t.Errorf("similarity(%q, %q) = %.3f, want < 0.5", p[0], p[1], got)
		}
	}
}
