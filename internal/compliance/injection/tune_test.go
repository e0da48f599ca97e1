package injection

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// TestTuneSet reports precision, recall, F1, the false-positive rate on
// security-adjacent benign rows and ROC-AUC on a labelled JSON Lines set
// ({"text","label","kind","lang"}): INJ_TUNE=path/to/injection_tune.jsonl.
// It is a measuring tool, skipped without the variable; the repository's
// quality harness holds the held-out figures.
func TestTuneSet(t *testing.T) {
	path := os.Getenv("INJ_TUNE")
	if path == "" {
		t.Skip("INJ_TUNE not set")
	}
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type row struct{ Text, Label, Kind, Lang string }
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	var d Detector
	var tp, fp, fn, tn, adj, adjFP int
	type sl struct {
		s float64
		p bool
	}
	var all []sl
	perKind := map[string][2]int{}
	for _, r := range rows {
		s := d.Score(r.Text)
		pos := r.Label != "benign"
		all = append(all, sl{s, pos})
		flag := s >= DefaultThreshold
		k := perKind[r.Label+"/"+r.Kind]
		k[1]++
		if flag == pos {
			k[0]++
		}
		perKind[r.Label+"/"+r.Kind] = k
		switch {
		case pos && flag:
			tp++
		case pos:
			fn++
			if os.Getenv("INJ_SHOW") != "" {
				fmt.Printf("MISS %.3f [%s/%s] %q\n", s, r.Kind, r.Lang, r.Text)
			}
		case flag:
			fp++
			if os.Getenv("INJ_SHOW") != "" {
				fs, _ := d.Scan(r.Text, nil)
				fmt.Printf("FP   %.3f [%s/%s] %q %v\n", s, r.Kind, r.Lang, r.Text, fs)
			}
		default:
			tn++
		}
		if !pos && (r.Kind == "security_question" || r.Kind == "trigger_words") {
			adj++
			if flag {
				adjFP++
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].s < all[j].s })
	// AUC by ranks (ties averaged)
	var rankSum float64
	npos := 0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].s == all[i].s {
			j++
		}
		avg := float64(i+j+1) / 2
		for k := i; k < j; k++ {
			if all[k].p {
				rankSum += avg
				npos++
			}
		}
		i = j
	}
	nneg := len(all) - npos
	auc := (rankSum - float64(npos*(npos+1))/2) / float64(npos*nneg)
	p := float64(tp) / float64(tp+fp)
	rc := float64(tp) / float64(tp+fn)
	keys := make([]string, 0, len(perKind))
	for k := range perKind {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-40s %d/%d", k, perKind[k][0], perKind[k][1])
	}
	t.Logf("rows %d: precision %.3f recall %.3f F1 %.3f AUC %.3f (tp %d fp %d fn %d tn %d); security-adjacent FP %d/%d = %.3f",
		len(rows), p, rc, 2*p*rc/(p+rc), auc, tp, fp, fn, tn, adjFP, adj, float64(adjFP)/float64(max(adj, 1)))
}
