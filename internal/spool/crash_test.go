package spool

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// crashEnv names the parent directory TestCrashChild spools into; the
// child runs only when it is set.
const crashEnv = "SPOOL_CRASH_PARENT"

// crashPadding makes the child's frames about 100 bytes, so that its
// 4 KiB segments rotate and are deleted while it runs.
var crashPadding = strings.Repeat("p", 80)

// TestCrashChild is the process TestCrash kills: it appends frames "v<i>"
// forever, printing "A i" after each Append returned, and acknowledges some
// of them, printing "B i" before the StreamAck and "K i" after it returned,
// then "C n" when every frame below n is acknowledged (so the cursor is past
// them: acknowledgements out of order are kept in memory only).
func TestCrashChild(t *testing.T) {
	parent := os.Getenv(crashEnv)
	if parent == "" {
		t.Skip("run by TestCrash")
	}
	s, err := OpenDir(parent, Options{Key: testKey, SegmentBytes: 4096})
	if err != nil {
		fmt.Printf("error %v\n", err)
		os.Exit(1)
	}
	ctx := context.Background()
	type held struct {
		id string
		i  int
	}
	var unacked []held
	ackedSet, low := map[int]bool{}, 0
	for i, round := 0, 0; ; round++ {
		for range 10 {
			if err := s.Append(fmt.Appendf(nil, "v%d-%s", i, crashPadding)); err != nil {
				fmt.Printf("error %v\n", err)
				os.Exit(1)
			}
			fmt.Printf("A %d\n", i)
			i++
		}
		// A consumer per round, so each read gets the new frames.
		got, err := s.StreamRead(ctx, testKey, testGroup, fmt.Sprint("c", round), 100, -1, 0)
		if err != nil {
			fmt.Printf("error %v\n", err)
			os.Exit(1)
		}
		var acks []string
		var acked []int
		for _, e := range got {
			var n int
			fmt.Sscanf(string(e.Value), "v%d-", &n)
			if n%3 == 0 {
				acks, acked = append(acks, e.ID), append(acked, n)
			} else {
				unacked = append(unacked, held{e.ID, n})
			}
		}
		// Every 7th round, the older rest too: the watermark moves on and
		// segments are deleted.
		if round%7 == 6 {
			keep := unacked[:0]
			for _, h := range unacked {
				if h.i < i-50 {
					acks, acked = append(acks, h.id), append(acked, h.i)
				} else {
					keep = append(keep, h)
				}
			}
			unacked = keep
		}
		for _, n := range acked {
			fmt.Printf("B %d\n", n)
		}
		if err := s.StreamAck(ctx, testKey, testGroup, acks...); err != nil {
			fmt.Printf("error %v\n", err)
			os.Exit(1)
		}
		for _, n := range acked {
			fmt.Printf("K %d\n", n)
			ackedSet[n] = true
		}
		for ackedSet[low] {
			low++
		}
		fmt.Printf("C %d\n", low)
	}
}

// TestCrash kills a process that appends and acknowledges with SIGKILL,
// adopts its spool and checks that every frame it appended and did not
// start to acknowledge is there, exactly once, and none below the
// watermark it committed (those acknowledged out of order above it may be
// delivered again: at least once).
func TestCrash(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	parent := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	appended, begun, acked := map[int]bool{}, map[int]bool{}, map[int]bool{}
	committed := 0
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		var kind string
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "%s %d", &kind, &n); err != nil {
			t.Logf("child: %s", sc.Text())
			continue
		}
		switch kind {
		case "A":
			appended[n] = true
		case "B":
			begun[n] = true
		case "K":
			acked[n] = true
		case "C":
			committed = n
		}
		if len(appended) == 3000 && !killed {
			// The live child's spool is not an orphan.
			if got := orphans(t, parent); len(got) != 0 {
				t.Errorf("Orphans adopted the live child's spool %s", got[0].Dir())
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatalf("kill: %v", err)
			}
			killed = true
		}
	}
	if err := cmd.Wait(); !killed || err == nil {
		t.Fatalf("child ended before it was killed: %v", err)
	}
	if len(acked) == 0 || len(acked) == len(appended) {
		t.Fatalf("the child acknowledged %d of %d frames: nothing tested", len(acked), len(appended))
	}

	// Segments below the watermark were deleted as the child ran.
	if n := len(segFiles(t, filepath.Join(parent, "0"))); n == 0 || n > 10 {
		t.Errorf("%d segment files left by the child, want 1 to 10 (frames above the watermark only)", n)
	}
	adopted := orphans(t, parent)
	if len(adopted) != 1 {
		t.Fatalf("Orphans after the kill: %d spools, want the child's", len(adopted))
	}
	found := map[int]bool{}
	for _, v := range drain(t, adopted[0], true) {
		var n int
		fmt.Sscanf(v, "v%d-", &n)
		if found[n] {
			t.Errorf("frame %d delivered twice", n)
		}
		found[n] = true
	}
	missing, resurrected, again := 0, 0, 0
	for n := range appended {
		if !begun[n] && !found[n] {
			missing++
		}
	}
	for n := range found {
		switch {
		case n < committed:
			resurrected++
		case acked[n]:
			again++
		}
	}
	if missing > 0 || resurrected > 0 {
		t.Errorf("%d unacknowledged frames missing, %d frames below the committed watermark %d delivered again", missing, resurrected, committed)
	}
	if committed < 1000 {
		t.Errorf("the watermark reached frame %d only: segment deletion untested", committed)
	}
	t.Logf("child appended %d frames (reported), acknowledged %d, committed below %d; %d found after the kill, %d of them acknowledged out of order",
		len(appended), len(acked), committed, len(found), again)
	if err := adopted[0].Remove(); err != nil {
		t.Errorf("Remove: %v", err)
	}
}
