package bridge_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/bridge"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/spool"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/zstdcodec"
)

// pagesEntries and pagesBatch are the size of one page measurement: the
// entries drained, in the bridge's batches.
const (
	pagesEntries = 20000
	pagesBatch   = 512
)

// pagesVariant is one way of storing the log that BenchmarkDrainPages
// measures: extra SQLite parameters for the DSN (each "&_pragma=…"),
// statements run after the migrations, whether the entries vary in user,
// key, model and conversation (as many callers do) instead of
// benchDrain's one caller, and how many entries the database holds before
// the measured ones (0: a fresh database; more: the steady state of one
// that has been in use, whose indexes have more leaves than a batch has
// distinct values).
type pagesVariant struct {
	name    string
	dsn     string
	setup   []string
	varied  bool
	prefill int
	// zstdSized stores entries the size zstdcodec compresses them to.
	zstdSized bool
}

// pagesVariants are the layouts measured: the schema as migrated, and the
// candidates for writing fewer pages per entry.
var pagesVariants = []pagesVariant{
	{name: "schema"},
	{name: "varied", varied: true},
	{name: "varied-after-200k", varied: true, prefill: 200000},
	{name: "no-secondary-indexes", setup: dropIndexes(
		"ts", "key_id_ts", "user_id_ts", "conversation_id_ts", "provider_ts", "model_ts", "status_ts")},
	// sqlstore sets an 8 MiB page cache; SQLite's own default is 2 MiB.
	{name: "cache-2MiB", dsn: "&_pragma=cache_size(-2000)"},
	// The driver runs the _pragma list sorted, journal_mode(WAL) (which
	// fixes the page size) before page_size: the journal mode is given by
	// its own key, which the driver applies after the list.
	{name: "page-8KiB", dsn: "&_journal_mode=WAL&_pragma=page_size(8192)"},
	{name: "page-16KiB", dsn: "&_journal_mode=WAL&_pragma=page_size(16384)"},
	{name: "zstd-sized", zstdSized: true},
	{name: "varied-after-200k-zstd-sized", varied: true, prefill: 200000, zstdSized: true},
	{name: "varied-after-200k-cache-2MiB", dsn: "&_pragma=cache_size(-2000)", varied: true, prefill: 200000},
	{name: "varied-after-200k-cache-16MiB", dsn: "&_pragma=cache_size(-16384)", varied: true, prefill: 200000},
	{name: "varied-after-200k-page-8KiB", dsn: "&_journal_mode=WAL&_pragma=page_size(8192)", varied: true, prefill: 200000},
	{name: "varied-after-200k-page-16KiB", dsn: "&_journal_mode=WAL&_pragma=page_size(16384)", varied: true, prefill: 200000},
}

// dropIndexes returns the statements dropping the named audit_logs indexes
// (without their "audit_logs_" prefix).
func dropIndexes(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "DROP INDEX audit_logs_" + n
	}
	return out
}

// BenchmarkDrainPages measures the database pages the bridge writes per
// entry: pagesEntries entries shaped like benchDrain's, drained from a
// spool into a fresh SQLite database (or one holding the variant's
// prefill first; opened as sqlstore opens it, the rollups on, as wire
// runs the bridge) in batches of pagesBatch, with the WAL's automatic
// checkpoints off so that the WAL keeps every frame written. It reports,
// per 1,000 entries, the WAL frames (a page each, written with two pwrite
// calls: frame header and page), the frames of the table, of its indexes
// and of the rollup tables, and from those frames the checkpoints SQLite's
// default wal_autocheckpoint (1,000 frames) would run and the pages they
// would copy; the process's read and write system calls and its CPU per
// entry during the drain (checkpoints aside); the mean entry and row
// sizes. With -v it logs the frames of each b-tree. Run it with
// -benchtime=1x (each op is one whole measurement; the variants with a
// prefill take about 20 s each).
func BenchmarkDrainPages(b *testing.B) {
	for _, v := range pagesVariants {
		b.Run(v.name, func(b *testing.B) {
			var r pagesResult
			for b.Loop() {
				r = measurePages(b, v)
			}
			r.report(b)
		})
	}
}

// BenchmarkDrainVariants is BenchmarkDrainSQLite (autocheckpoint on) on
// each of pagesVariants' layouts that only the database's parameters and
// setup make (benchDrain's entries on a fresh database), for the CPU per
// entry each costs.
func BenchmarkDrainVariants(b *testing.B) {
	for _, v := range pagesVariants {
		if v.varied || v.prefill > 0 || v.zstdSized {
			continue
		}
		b.Run(v.name, func(b *testing.B) { drainSQLite(b, v) })
	}
}

// openPagesDB opens the database at path as sqlstore opens it, with v's
// parameters and setup. Its first parameter, foreign_keys(1), is one
// sqlstore sets anyway: v's parameters follow it with "&".
func openPagesDB(tb testing.TB, path string, v pagesVariant) *sqlstore.DB {
	tb.Helper()
	db, err := sqlstore.Open(context.Background(), "sqlite://"+path+"?_pragma=foreign_keys(1)"+v.dsn)
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range v.setup {
		if _, err := db.Exec(context.Background(), s); err != nil {
			db.Close()
			tb.Fatalf("%s: %v", s, err)
		}
	}
	return db
}

// pagesExchange is entry i of a measurement and of benchDrain: a small chat exchange, or
// with varied one of 200 users, 20 keys, 4 models and 1,000
// conversations.
func pagesExchange(i int, start time.Time, varied bool) *pipeline.Exchange {
	x := &pipeline.Exchange{
		ID: "0193a1b2-c3d4-7e5f-8a9b-" + strconv.Itoa(100000000000+i), Start: start.Add(time.Duration(i) * time.Microsecond),
		End: start.Add(time.Duration(i)*time.Microsecond + 42*time.Millisecond), Endpoint: pipeline.Chat, Model: "gpt-4o-mini",
		Provider: "openai", UpstreamModel: "gpt-4o-mini", ResponseModel: "gpt-4o-mini-2024-07-18",
		RoutingStrategy: "direct", RoutingReason: "provider:openai", Status: 200,
		Usage:     llm.Usage{PromptTokens: 25, CompletionTokens: 12, TotalTokens: 37},
		Cost:      0.0000109,
		Principal: &identity.Principal{Kind: identity.VirtualKey, ID: "vk_01HZX3", MaskedKey: "sk-svc-ab12…"},
		Chat:      &llm.ChatRequest{User: "user-42", Messages: []llm.Message{{Role: "user"}}},
	}
	if varied {
		x.Principal.ID = fmt.Sprintf("vk_01HZX%03d", i*7%20)
		x.Chat.User = fmt.Sprintf("user-%03d", i*13%200)
		x.ResponseModel = []string{"gpt-4o-mini-2024-07-18", "gpt-4o-2024-08-06", "claude-3-5-haiku", "gemini-1.5-flash"}[i%4]
		x.ConversationID = fmt.Sprintf("conv-%04d", i*31%1000)
	}
	return x
}

// pagesEntry is entry i's JSON, as the proxy spools it.
func pagesEntry(tb testing.TB, i int, start time.Time, varied bool) []byte {
	tb.Helper()
	js, err := json.Marshal(audit.FromExchange(pagesExchange(i, start, varied), 40*time.Millisecond))
	if err != nil {
		tb.Fatal(err)
	}
	return js
}

// spoolEntries appends entries first to first+n-1 to sp and returns their
// mean JSON size.
func spoolEntries(tb testing.TB, sp *spool.Spool, first, n int, start time.Time, varied bool) float64 {
	tb.Helper()
	vals := make([][]byte, 0, pagesBatch)
	total := 0
	for i := first; i < first+n; i++ {
		js := pagesEntry(tb, i, start, varied)
		total += len(js)
		if vals = append(vals, js); len(vals) == cap(vals) || i == first+n-1 {
			if err := sp.StreamAppend(context.Background(), audit.HotLogKey, vals...); err != nil {
				tb.Fatal(err)
			}
			vals = vals[:0]
		}
	}
	return float64(total) / float64(n)
}

// pagesResult is one measurement: the mean entry JSON size, the WAL's
// frames and commits, and the b-tree of each page (dbstat) at the end.
type pagesResult struct {
	entries     int
	stored      int // entries in the database at the end, prefill included
	entryBytes  float64
	rowBytes    float64 // mean audit_logs row (cell payload)
	rowsPerLeaf float64
	cpu         time.Duration // the drain's, checkpoints aside
	io          ioCounts      // the process's during the drain
	pageSize    int
	frames      []walFrame
	owner       map[uint32]string // page number: b-tree name
	size        map[string]int    // b-tree name: pages at the end
}

// measurePages drains pagesEntries entries into a new database laid out
// as v says (holding v.prefill entries first), with automatic checkpoints
// off, and reads the WAL the drain wrote.
func measurePages(tb testing.TB, v pagesVariant) pagesResult {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	path := filepath.Join(dir, "svc.db")
	v.dsn += "&_pragma=wal_autocheckpoint(0)"
	db := openPagesDB(tb, path, v)
	defer db.Close()
	sp, err := spool.Open(filepath.Join(dir, "spool"), spool.Options{Key: audit.HotLogKey, MaxBytes: 4 << 30, SegmentBytes: 64 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	defer sp.Close()
	start := time.Now().UTC().Add(-time.Hour)
	prefill(tb, db, v, start)
	r := pagesResult{entries: pagesEntries, stored: v.prefill + pagesEntries,
		entryBytes: spoolEntries(tb, sp, v.prefill, pagesEntries, start, v.varied)}
	// The migrations' and the prefill's frames go to the database file:
	// the WAL starts empty.
	if _, err := db.Exec(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		tb.Fatal(err)
	}
	var w bridge.Writer = audit.NewSQLStore(db)
	if v.zstdSized {
		w = zstdSized{w}
	}
	br := bridge.New(sp, w, metrics.New(nil), quiet, bridge.Options{
		Batch: pagesBatch, Block: 10 * time.Millisecond, Rollups: analytics.NewRollups(db).Add})
	cpu, io := cpuTime(), readIO()
	for done := 0; done < pagesEntries; {
		n, err := br.DrainOnce(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		done += n
	}
	r.cpu, r.io = cpuTime()-cpu, readIO().sub(io)
	if r.pageSize, r.frames, err = readWAL(path + "-wal"); err != nil {
		tb.Fatal(err)
	}
	r.readDB(tb, db)
	return r
}

// readDB reads, with dbstat, the b-tree of each page of db, the pages of
// each b-tree and the rows of audit_logs' leaves.
func (r *pagesResult) readDB(tb testing.TB, db *sqlstore.DB) {
	tb.Helper()
	r.owner, r.size = pageOwners(tb, db)
	if err := db.QueryRow(context.Background(), `SELECT CAST(SUM(payload) AS REAL) / SUM(ncell), CAST(SUM(ncell) AS REAL) / COUNT(*)
		FROM dbstat WHERE name = 'audit_logs' AND pagetype = 'leaf'`).Scan(&r.rowBytes, &r.rowsPerLeaf); err != nil {
		tb.Fatal(err)
	}
}

// zstdSized is a Writer that stores each entry as a JSON string as long
// as the entry compressed with zstdcodec (plus a byte): the rows and pages
// that storing the entries compressed would write, without the code to
// read them back.
type zstdSized struct{ bridge.Writer }

// Write writes recs with their entries replaced.
func (z zstdSized) Write(ctx context.Context, recs []audit.Record, then audit.Inserted) (int, error) {
	for i := range recs {
		c, err := zstdcodec.Encode(nil, recs[i].Entry)
		if err != nil {
			return 0, err
		}
		recs[i].Entry = []byte(`"` + strings.Repeat("z", len(c)-1) + `"`)
	}
	return z.Writer.Write(ctx, recs, then)
}

// prefill writes v.prefill entries into db through the store and the
// rollups as the bridge does, checkpointing as it goes.
func prefill(tb testing.TB, db *sqlstore.DB, v pagesVariant, start time.Time) {
	tb.Helper()
	ctx := context.Background()
	s, add := audit.NewSQLStore(db), analytics.NewRollups(db).Add
	recs := make([]audit.Record, 0, pagesBatch)
	for i := range v.prefill {
		rec, err := audit.RecordFromJSON(pagesEntry(tb, i, start, v.varied))
		if err != nil {
			tb.Fatal(err)
		}
		if recs = append(recs, rec); len(recs) < pagesBatch && i < v.prefill-1 {
			continue
		}
		if _, err := s.Write(ctx, recs, add); err != nil {
			tb.Fatal(err)
		}
		recs = recs[:0]
		if _, err := db.Exec(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			tb.Fatal(err)
		}
	}
}

// ioCounts are the process's read and write system calls
// (/proc/self/io: syscr, syscw; zero where there is none).
type ioCounts struct{ reads, writes int }

// readIO reads the process's ioCounts so far.
func readIO() ioCounts {
	var c ioCounts
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return c
	}
	for line := range strings.Lines(string(b)) {
		name, val, _ := strings.Cut(strings.TrimSpace(line), ": ")
		n, _ := strconv.Atoi(val)
		switch name {
		case "syscr":
			c.reads = n
		case "syscw":
			c.writes = n
		}
	}
	return c
}

func (c ioCounts) sub(d ioCounts) ioCounts { return ioCounts{c.reads - d.reads, c.writes - d.writes} }

// walFrame is one frame of the WAL: the page it holds, and whether it
// ends a transaction.
type walFrame struct {
	page   uint32
	commit bool
}

// readWAL reads the frame headers of the WAL file at path (the format of
// sqlite.org/fileformat2.html#walformat), up to the first frame of
// another generation (salts that differ from the header's).
func readWAL(path string) (int, []walFrame, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	if len(b) < 32 {
		return 0, nil, fmt.Errorf("wal %s: %d bytes, no header", path, len(b))
	}
	be := binary.BigEndian
	pageSize := int(be.Uint32(b[8:]))
	salts := b[16:24]
	var frames []walFrame
	for off := 32; off+24+pageSize <= len(b); off += 24 + pageSize {
		h := b[off : off+24]
		if string(h[8:16]) != string(salts) {
			break
		}
		frames = append(frames, walFrame{page: be.Uint32(h), commit: be.Uint32(h[4:]) != 0})
	}
	return pageSize, frames, nil
}

// pageOwners maps each page of db to the b-tree holding it (dbstat), and
// counts each b-tree's pages.
func pageOwners(tb testing.TB, db *sqlstore.DB) (map[uint32]string, map[string]int) {
	tb.Helper()
	rows, err := db.Query(context.Background(), "SELECT name, pageno FROM dbstat")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	owner, size := map[uint32]string{}, map[string]int{}
	for rows.Next() {
		var (
			name string
			page uint32
		)
		if err := rows.Scan(&name, &page); err != nil {
			tb.Fatal(err)
		}
		owner[page] = name
		size[name]++
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return owner, size
}

// checkpoints are the automatic checkpoints SQLite would run over frames
// with wal_autocheckpoint at limit frames (after the commit that brings
// the WAL to limit, copying each page once, the WAL then starting over),
// and the pages they copy.
func checkpoints(frames []walFrame, limit int) (runs, copied int) {
	pages := map[uint32]bool{}
	n := 0
	for _, f := range frames {
		pages[f.page] = true
		if n++; f.commit && n >= limit {
			runs++
			copied += len(pages)
			clear(pages)
			n = 0
		}
	}
	return runs, copied
}

// group is the part of the database a b-tree belongs to, for the summary
// metrics: the table, its indexes, the rollups, or other.
func group(name string) string {
	switch {
	case name == "audit_logs":
		return "table"
	case strings.HasPrefix(name, "audit_logs_"), strings.HasPrefix(name, "sqlite_autoindex_audit_logs"):
		return "indexes"
	case strings.HasPrefix(name, "analytics_"):
		return "rollups"
	}
	return "other"
}

// report reports r's figures per 1,000 entries as metrics and logs the
// frames of each b-tree.
func (r pagesResult) report(b *testing.B) {
	per := func(n int) float64 { return float64(n) * 1000 / float64(r.entries) }
	commits, byTree, byGroup := 0, map[string]int{}, map[string]int{}
	for _, f := range r.frames {
		name := r.owner[f.page]
		if name == "" {
			name = "(not in a b-tree)"
		}
		byTree[name]++
		byGroup[group(name)]++
		if f.commit {
			commits++
		}
	}
	runs, copied := checkpoints(r.frames, 1000)
	b.ReportMetric(r.entryBytes, "entry-B")
	b.ReportMetric(float64(r.cpu.Nanoseconds())/float64(r.entries), "cpu-ns/entry")
	b.ReportMetric(float64(r.pageSize), "page-B")
	b.ReportMetric(r.rowBytes, "row-B")
	b.ReportMetric(r.rowsPerLeaf, "rows/leaf")
	b.ReportMetric(per(len(r.frames)), "frames/1k")
	b.ReportMetric(per(r.io.reads), "read-calls/1k")
	b.ReportMetric(per(r.io.writes), "write-calls/1k")
	b.ReportMetric(per(runs), "ckpt/1k")
	b.ReportMetric(per(copied), "ckpt-pages/1k")
	for _, g := range []string{"table", "indexes", "rollups", "other"} {
		b.ReportMetric(per(byGroup[g]), g+"-frames/1k")
	}
	names := make([]string, 0, len(byTree))
	for n := range byTree {
		names = append(names, n)
	}
	slices.SortFunc(names, func(x, y string) int { return byTree[y] - byTree[x] })
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d entries, %d commits, %d frames of %d B; checkpoints at 1,000 frames: %d copying %d pages; at 4,000: ",
		r.entries, commits, len(r.frames), r.pageSize, runs, copied)
	runs4, copied4 := checkpoints(r.frames, 4000)
	fmt.Fprintf(&sb, "%d copying %d pages\n%-34s %12s %10s\n", runs4, copied4, "b-tree", "frames/1k", "pages/1k")
	for _, n := range names {
		fmt.Fprintf(&sb, "%-34s %12.1f %14.1f\n", n, per(byTree[n]), float64(r.size[n])*1000/float64(r.stored))
	}
	b.Log(sb.String())
}
