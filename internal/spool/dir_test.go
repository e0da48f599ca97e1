package spool

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func openDir(t *testing.T, parent string) *Spool {
	t.Helper()
	s, err := OpenDir(parent, Options{Key: testKey})
	if err != nil {
		t.Fatalf("OpenDir: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func orphans(t *testing.T, parent string) []*Spool {
	t.Helper()
	got, err := Orphans(parent, Options{Key: testKey})
	if err != nil {
		t.Fatalf("Orphans: %v", err)
	}
	for _, s := range got {
		t.Cleanup(func() { s.Close() })
	}
	return got
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestOpenDirLocking(t *testing.T) {
	parent := t.TempDir()
	a := openDir(t, parent)
	b := openDir(t, parent)
	if a.Dir() != filepath.Join(parent, "0") || b.Dir() != filepath.Join(parent, "1") {
		t.Fatalf("OpenDir twice: %s and %s, want %s/0 and %s/1", a.Dir(), b.Dir(), parent, parent)
	}
	if _, err := Open(a.Dir(), Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open of a held directory: %v, want ErrLocked", err)
	}
	appendAll(t, a, "a")
	appendAll(t, b, "b")
	if got := orphans(t, parent); len(got) != 0 {
		t.Fatalf("Orphans while both spools are open: %d, want none", len(got))
	}
	if !exists(a.Dir()) || !exists(b.Dir()) {
		t.Fatal("Orphans removed a live spool")
	}

	// a dies with an entry: a new process takes dir 0 over, entry and all.
	a.Close()
	c := openDir(t, parent)
	if c.Dir() != a.Dir() {
		t.Fatalf("OpenDir after the first closed: %s, want %s", c.Dir(), a.Dir())
	}
	if got := drain(t, c, true); !slices.Equal(got, []string{"a"}) {
		t.Errorf("taken-over spool: %q, want [a]", got)
	}
}

func TestOrphans(t *testing.T) {
	parent := t.TempDir()
	own := openDir(t, parent)
	dead := openDir(t, parent)
	empty := openDir(t, parent)
	appendAll(t, own, "own")
	appendAll(t, dead, "x", "y")
	got := read(t, dead, "c", 1)
	ack(t, dead, ids(got)...)
	dead.Close()
	empty.Close()
	if err := os.Mkdir(filepath.Join(parent, "not-a-spool"), 0o700); err != nil {
		t.Fatal(err)
	}

	adopted := orphans(t, parent)
	if len(adopted) != 1 || adopted[0].Dir() != dead.Dir() {
		t.Fatalf("Orphans = %v, want the dead spool %s", adopted, dead.Dir())
	}
	if exists(empty.Dir()) {
		t.Errorf("the empty orphan %s was not removed", empty.Dir())
	}
	if !exists(filepath.Join(parent, "not-a-spool")) {
		t.Error("Orphans touched a directory that is not a spool")
	}
	o := adopted[0]
	if err := o.Remove(); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("Remove with an unacknowledged entry: %v, want ErrNotEmpty", err)
	}
	if got := drain(t, o, true); !slices.Equal(got, []string{"y"}) {
		t.Errorf("the orphan held %q, want [y]", got)
	}
	if err := o.Remove(); err != nil {
		t.Fatalf("Remove of the drained orphan: %v", err)
	}
	if exists(dead.Dir()) {
		t.Errorf("%s still exists after Remove", dead.Dir())
	}
	if got := drain(t, own, false); !slices.Equal(got, []string{"own"}) {
		t.Errorf("own spool: %q, want [own]", got)
	}
	// The removed directory's number is free again.
	again := openDir(t, parent)
	if again.Dir() != dead.Dir() {
		t.Errorf("OpenDir after the orphan went: %s, want %s", again.Dir(), dead.Dir())
	}
}
