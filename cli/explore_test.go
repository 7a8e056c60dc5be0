package cli

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"landslide/emu/elfsym"
	"landslide/fixtures"
	"landslide/internal/testutil"
	"landslide/kernel"
	"landslide/report"
)

// explore runs `landslide explore PROGRAM ARGS... --trace-dir DIR` in-process
// with a fresh temporary trace directory, which it returns.
func explore(t *testing.T, program string, args ...string) (code int, stdout, stderr, dir string) {
	t.Helper()
	dir = t.TempDir()
	all := append([]string{"explore", program}, args...)
	all = append(all, "--trace-dir", dir)
	code, stdout, stderr = runCLI(all...)
	return code, stdout, stderr, dir
}

// quietStderr: with --quiet, stderr holds at most the stored run's line
// (its ID and how to resume it, which a user needs after a crash).
func quietStderr(errOut string) bool {
	return errOut == "" || (strings.Count(errOut, "\n") == 1 && strings.HasPrefix(errOut, "landslide: run ") &&
		strings.Contains(errOut, "landslide resume "))
}

// exploreDoc is the document the command prints (one schema: schema.go).
type exploreDoc = ExploreJSON

func decodeDoc(t *testing.T, out string) exploreDoc {
	t.Helper()
	var d exploreDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, out)
	}
	return d
}

func readFixture(t *testing.T, name string) ([]byte, *elfsym.Symbols) {
	t.Helper()
	data, err := os.ReadFile(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	img, err := elfsym.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return data, img.Symbols
}

// paradiseSource reads what the seeded bug must look like from the test
// program's source: the number of consumer threads, the assertion's text
// and its line.
func paradiseSource(t *testing.T) (consumers int, assertText string, assertLine int) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(fixtures.Root(), "fixtures/src/tests/paradise_lost.c"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#define NUM_CONSUMERS (\d+)$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("paradise_lost.c: no NUM_CONSUMERS")
	}
	consumers, _ = strconv.Atoi(string(m[1]))
	for i, l := range strings.Split(string(src), "\n") {
		if m := regexp.MustCompile(`^\s*assert\(.*&& "([^"]+)"\);`).FindStringSubmatch(l); m != nil {
			assertText, assertLine = m[1], i+1
		}
	}
	if assertText == "" {
		t.Fatal("paradise_lost.c: no assert with a message")
	}
	return consumers, assertText, assertLine
}

// exploreParadiseLost explores the seeded Paradise Lost bug (sem_wait
// checks its count with "if" instead of "while") under the default PP set
// and returns stdout, the trace directory and the decoded JSON trace.
//
// The bug needs exactly one preemption: a consumer must be blocked in
// sem_wait before main posts the token, which means preempting main
// (otherwise main runs on to thr_join, posting before anyone waits); after
// that every switch is voluntary (main blocks in thr_join, the other
// consumer takes the token and yields in its critical section, the woken
// consumer walks in). Iterative context bounding up to one preemption
// therefore must find it; unbounded DPOR finds it too, but only after
// ~384,000 interleavings (about three minutes), too slow for a unit test.
func exploreParadiseLost(t *testing.T) (stdout, dir string, tr report.Trace) {
	t.Helper()
	prog := fixture(t, "sem_if/paradise_lost")
	code, out, errOut, dir := explore(t, prog, "--quiet", "--preemption-bound", "1")
	if code != ExitBug {
		t.Fatalf("exit %d, want 1 (a bug)\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !quietStderr(errOut) {
		t.Errorf("--quiet, yet stderr %q", errOut)
	}
	data, err := os.ReadFile(filepath.Join(dir, "landslide-bug-paradise_lost.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatalf("the JSON trace does not decode: %v", err)
	}
	return out, dir, tr
}

// TestExploreParadiseLostReport: the bug report's three renderings, the
// HTML one as headless Chromium builds it.
func TestExploreParadiseLostReport(t *testing.T) {
	if _, err := testutil.ChromiumPath(); err != nil {
		t.Fatalf("headless Chromium is required for this test: %v", err)
	}
	consumers, assertText, assertLine := paradiseSource(t)
	out, dir, tr := exploreParadiseLost(t)

	base := filepath.Join(dir, "landslide-bug-paradise_lost")
	for _, ext := range []string{".txt", ".html", ".json"} {
		if _, err := os.Stat(base + ext); err != nil {
			t.Errorf("bug report %s missing: %v", ext, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("trace dir holds %d files, want the 3 reports", len(entries))
	}
	if !strings.Contains(out, "Bug reports: "+base+".txt, "+base+".html, "+base+".json\n") {
		t.Errorf("stdout does not list the three report files")
	}

	// The bug is the assertion about two threads in the critical section.
	if tr.Bug == nil {
		t.Fatal("the JSON trace has no bug")
	}
	where := fmt.Sprintf("paradise_lost.c:%d", assertLine)
	if tr.Bug.Kind != "assert" || !strings.Contains(tr.Bug.Message, assertText) || !strings.Contains(tr.Bug.Message, where) {
		t.Errorf("bug %s %q, want an assert at %s about %q", tr.Bug.Kind, tr.Bug.Message, where, assertText)
	}
	if !strings.HasPrefix(out, "A bug was found! [assert]\n"+tr.Bug.Message+"\n") {
		t.Errorf("stdout does not start with the assertion bug:\n%.300s", out)
	}

	// The threads: main and the consumers, each with its column.
	threads := map[int32]bool{}
	for _, s := range tr.Steps {
		threads[s.Thread] = true
	}
	if len(threads) != 1+consumers || len(tr.Threads) != 1+consumers {
		t.Errorf("the trace runs threads %v (columns %v), want main + %d consumers", threads, tr.Threads, consumers)
	}
	for _, c := range tr.Threads {
		if !threads[c] {
			t.Errorf("column for thread %d, which never runs", c)
		}
	}
	if len(tr.Steps) == 0 || !tr.Steps[len(tr.Steps)-1].Failure || tr.Steps[len(tr.Steps)-1].Thread != tr.Bug.Thread {
		t.Errorf("the last step is not the failing thread's failure")
	}
	for i, s := range tr.Steps[:max(len(tr.Steps)-1, 0)] {
		if s.Failure {
			t.Errorf("step %d is marked as the failure but is not the last", i)
		}
	}

	// Exactly one preemption (see exploreParadiseLost), counted the same
	// way in the header and in the steps.
	preempted := 0
	for _, s := range tr.Steps {
		if s.Preempted {
			preempted++
		}
	}
	if tr.Preemptions != 1 || preempted != 1 {
		t.Errorf("%d preemptions, %d preempted steps, want 1", tr.Preemptions, preempted)
	}

	// The PP labels. From the program: the thread library locks mutexes,
	// main creates threads, a consumer blocks in sem_wait and is woken by
	// sem_signal, the critical section yields, and the failing step ends
	// the execution.
	labels := map[string]bool{}
	for _, s := range tr.Steps {
		labels[s.PP] = true
	}
	for _, want := range []string{"mutex_lock", "mutex_unlock", "thread_create", "deschedule", "make_runnable", "yield", "end"} {
		if !labels[want] {
			t.Errorf("no %q PP in the trace (labels %v)", want, labels)
		}
	}
	for l := range labels {
		if !strings.Contains(out, " -> "+l) {
			t.Errorf("PP label %q of the trace is not in the text report", l)
		}
	}
	for _, want := range []string{
		fmt.Sprintf("Distinct interleavings tested: %d\n", tr.Interleavings),
		"Estimated state space size: ",
		"Preemptions in this trace: 1\n",
		"\nReplay: " + tr.Replay + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text report lacks %q", want)
		}
	}
	if tr.Interleavings < 1 || !strings.HasPrefix(tr.Replay, "landslide run ") {
		t.Errorf("interleavings %d, replay %q", tr.Interleavings, tr.Replay)
	}
	txt, err := os.ReadFile(base + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(txt) == 0 || !strings.HasPrefix(out, string(txt)) {
		t.Errorf("the .txt report is not what stdout printed")
	}

	// The HTML, as the browser builds it.
	dom, err := testutil.DumpDOM(base + ".html")
	if err != nil {
		t.Fatalf("DumpDOM: %v", err)
	}
	if err := testutil.CheckTraceDOM(dom, &tr); err != nil {
		t.Errorf("the DOM does not match the JSON trace:\n%v", err)
	}
	if m := regexp.MustCompile(`<code class="bug-kind">([^<]*)</code>`).FindStringSubmatch(dom); m == nil || m[1] != "assert" {
		t.Errorf("the HTML header's bug kind is %q, want assert", m)
	}
	if m := regexp.MustCompile(`<p class="bug-message">([^<]*)</p>`).FindStringSubmatch(dom); m == nil ||
		!strings.Contains(html.UnescapeString(m[1]), assertText) {
		t.Errorf("the HTML header's bug message is %q, want the assertion %q", m, assertText)
	}
	thead := regexp.MustCompile(`(?s)<table id="trace">\s*<thead>(.*?)</thead>`).FindStringSubmatch(dom)
	if thead == nil {
		t.Fatal("no thead in table#trace")
	}
	var cols []int32
	for _, m := range regexp.MustCompile(`<th>Thread (\d+)</th>`).FindAllStringSubmatch(thead[1], -1) {
		n, _ := strconv.Atoi(m[1])
		cols = append(cols, int32(n))
	}
	var want []int32
	for th := range threads {
		want = append(want, th)
	}
	slices.Sort(want)
	if !slices.Equal(cols, want) {
		t.Errorf("HTML columns for threads %v, want one per thread of the trace %v", cols, want)
	}
}

// replayArgs splits a replay command line as a POSIX shell would (words,
// single-quoted strings).
func replayArgs(t *testing.T, line string) []string {
	t.Helper()
	var args []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args
}

// TestExploreReplayReproduces: the trace's replay command, run as is,
// fails with the same bug.
func TestExploreReplayReproduces(t *testing.T) {
	_, _, tr := exploreParadiseLost(t)
	args := replayArgs(t, tr.Replay)
	if len(args) < 3 || args[0] != "landslide" || args[1] != "run" {
		t.Fatalf("replay %q is not a landslide run command", tr.Replay)
	}
	code, _, errOut := runCLI(args[1:]...)
	if code != ExitBug {
		t.Fatalf("replay exits %d, want 1\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "A bug was found! [assert]\n"+tr.Bug.Message+"\n") {
		t.Errorf("the replay's bug is not %q:\n%s", tr.Bug.Message, errOut)
	}
	// And with --json, the same kind and thread.
	code, out, _ := runCLI(append(args[1:], "--json")...)
	var s RunJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil || code != ExitBug || len(s.Bugs) != 1 {
		t.Fatalf("replay --json: exit %d, %v", code, err)
	}
	if b := s.Bugs[0]; b.Kind != tr.Bug.Kind || b.Message != tr.Bug.Message || b.Thread != tr.Bug.Thread || b.Signature == "" {
		t.Errorf("replayed bug %+v, explored %+v", b, tr.Bug)
	}
}

var verifiedLine = regexp.MustCompile(`^Verified: all (\d+) interleavings of this state space completed with no bug`)

// TestExploreVerified: a correct program's state space completes: exit 0,
// the same count in text and JSON.
func TestExploreVerified(t *testing.T) {
	prog := fixture(t, "ref/broadcast_test")
	code, out, errOut, dir := explore(t, prog, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
	}
	if !quietStderr(errOut) {
		t.Errorf("--quiet, yet stderr %q", errOut)
	}
	m := verifiedLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("stdout does not start with \"Verified: all N interleavings\":\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("no bug, yet the trace dir holds %d files", len(entries))
	}

	code, out, _, _ = explore(t, prog, "--quiet", "--json")
	d := decodeDoc(t, out)
	if code != ExitOK || d.Result != "verified" || d.ExitCode != 0 || !d.Complete || !d.Verified || len(d.Bugs) != 0 {
		t.Errorf("--json: exit %d, %+v", code, d)
	}
	if d.Interleavings != n || n < 1 {
		t.Errorf("--json says %d interleavings, the text %d", d.Interleavings, n)
	}
	if !slices.Equal(d.PPSet, kernel.DefaultSyncPPs) {
		t.Errorf("PP set %v, want the default %v", d.PPSet, kernel.DefaultSyncPPs)
	}
}

// TestExploreBudget: a limit that stops the exploration early gives exit
// 3, the coverage estimate, and no bug report.
func TestExploreBudget(t *testing.T) {
	prog := fixture(t, "ref/paraguay")
	code, out, _, dir := explore(t, prog, "--quiet", "--max-interleavings", "50")
	if code != ExitBudget {
		t.Fatalf("exit %d, want 3\n%s", code, out)
	}
	re := regexp.MustCompile(`^Not verified: .*after 50 interleavings; estimated ([0-9.]+)% explored of about (\d+) interleavings\.\n`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("stdout lacks \"Not verified ... after 50 interleavings\" with the coverage:\n%s", out)
	}
	if p, _ := strconv.ParseFloat(m[1], 64); p <= 0 || p >= 100 {
		t.Errorf("coverage %s%% after stopping early", m[1])
	}
	if size, _ := strconv.Atoi(m[2]); size <= 50 {
		t.Errorf("estimated size %d, yet 50 interleavings did not complete the space", size)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("no bug, yet the trace dir holds %d files", len(entries))
	}

	code, out, _, _ = explore(t, prog, "--quiet", "--max-interleavings", "50", "--json")
	d := decodeDoc(t, out)
	if code != ExitBudget || d.Result != "budget" || d.ExitCode != ExitBudget || d.Complete || d.Verified || d.Executed != 50 || len(d.Bugs) != 0 {
		t.Errorf("--json: exit %d, %+v", code, d)
	}
	if d.Proportion <= 0 || d.Proportion >= 1 {
		t.Errorf("estimated proportion %v", d.Proportion)
	}
}

// TestExploreProgress: without --quiet, progress lines go to stderr, and
// only to stderr.
func TestExploreProgress(t *testing.T) {
	code, out, errOut, _ := explore(t, fixture(t, "ref/broadcast_test"), "--interval", "1ms")
	if code != ExitOK || !verifiedLine.MatchString(out) {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "landslide: run ") {
		t.Fatalf("stderr does not start with the stored run's ID and then progress: %q", errOut)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "explore: ") || !strings.Contains(l, " interleavings") || !strings.Contains(l, "ETA ") {
			t.Errorf("stderr line %q is not a progress line with interleavings and ETA", l)
		}
	}
	if strings.Contains(out, "explore: ") {
		t.Error("progress on stdout")
	}
}

// TestExploreDeterministic: the exploration does not depend on the run
// (only elapsed time may differ).
func TestExploreDeterministic(t *testing.T) {
	prog := fixture(t, "ref/mutex_test")
	var docs [2]map[string]any
	for i := range docs {
		code, out, _, _ := explore(t, prog, "--quiet", "--json", "--max-interleavings", "50")
		if code != ExitBudget {
			t.Fatalf("run %d: exit %d, want 3 (the space is larger than 50)", i, code)
		}
		if err := json.Unmarshal([]byte(out), &docs[i]); err != nil {
			t.Fatal(err)
		}
		delete(docs[i], "elapsed_seconds")
		delete(docs[i], "run") // each run is stored under its own ID
	}
	for _, k := range []string{"interleavings", "races", "pp_set"} {
		if _, ok := docs[0][k]; !ok {
			t.Errorf("no %q in the document", k)
		}
	}
	if docs[0]["interleavings"] != float64(50) {
		t.Errorf("interleavings %v, want 50", docs[0]["interleavings"])
	}
	if !reflect.DeepEqual(docs[0], docs[1]) {
		a, _ := json.MarshalIndent(docs[0], "", " ")
		b, _ := json.MarshalIndent(docs[1], "", " ")
		t.Errorf("two runs differ:\n%s\n---\n%s", a, b)
	}
}

// TestExploreDataRaceFunc: --data-race-func F is the same PP set as
// listing each memory instruction of F, whether as --data-race-pp 0xADDR
// or as F+offset in --pp.
//
// fig1's whole space with thread1's accesses as PPs is about 150,000
// interleavings (over a minute), so the three runs are bounded to one
// preemption, which still explores every race PP of thread1 as a switch
// point.
func TestExploreDataRaceFunc(t *testing.T) {
	prog := fixture(t, "ref/fig1")
	data, syms := readFixture(t, "ref/fig1")
	pcs, err := kernel.SharedMemoryPCs(data, []string{"thread1"})
	if err != nil {
		t.Fatal(err)
	}
	start, size, _ := syms.Lookup("thread1")
	if len(pcs) == 0 {
		t.Fatal("thread1 has no memory instructions (it loads and stores count)")
	}
	for _, pc := range pcs {
		if pc < start || pc >= start+size {
			t.Fatalf("SharedMemoryPCs(thread1) gave 0x%x outside thread1", pc)
		}
	}
	bound := []string{"--quiet", "--json", "--preemption-bound", "1"}

	_, out, _, _ := explore(t, prog, slices.Concat(bound, []string{"--data-race-func", "thread1"})...)
	byFunc := decodeDoc(t, out)

	var hex []string
	for _, pc := range pcs {
		hex = append(hex, fmt.Sprintf("0x%x", pc))
	}
	_, out, _, _ = explore(t, prog, slices.Concat(bound, []string{"--data-race-pp", strings.Join(hex, ",")})...)
	byAddr := decodeDoc(t, out)

	// The first half as thread1+offset in --pp (which come first), the
	// rest as --data-race-pp: the same PPs in the same order.
	half := len(pcs) / 2
	pp := slices.Clone(kernel.DefaultSyncPPs)
	for _, pc := range pcs[:half] {
		pp = append(pp, fmt.Sprintf("thread1+%d", pc-start))
	}
	args := slices.Concat(bound, []string{"--pp", strings.Join(pp, ",")})
	if half < len(pcs) {
		args = append(args, "--data-race-pp", strings.Join(hex[half:], ","))
	}
	_, out, _, _ = explore(t, prog, args...)
	mixed := decodeDoc(t, out)

	_, out, _, _ = explore(t, prog, bound...)
	none := decodeDoc(t, out)

	raceEntries := 0
	for _, p := range byFunc.PPSet {
		if strings.HasPrefix(p, "data race at ") && strings.Contains(p, "thread1") {
			raceEntries++
		}
	}
	if raceEntries != len(pcs) {
		t.Errorf("--data-race-func thread1: PP set %v, want %d data-race PPs in thread1", byFunc.PPSet, len(pcs))
	}
	if byFunc.Interleavings <= 0 || byFunc.Transitions <= 0 {
		t.Fatalf("--data-race-func thread1: %+v", byFunc)
	}
	for name, d := range map[string]exploreDoc{"--data-race-pp": byAddr, "--pp thread1+N": mixed} {
		if d.Interleavings != byFunc.Interleavings || d.Executed != byFunc.Executed || d.Transitions != byFunc.Transitions ||
			d.Result != byFunc.Result || !slices.Equal(d.PPSet, byFunc.PPSet) || len(d.Races) != len(byFunc.Races) {
			t.Errorf("%s: %d interleavings (%d run, %d transitions, %s), PP set %v;\n--data-race-func: %d (%d, %d, %s), %v",
				name, d.Interleavings, d.Executed, d.Transitions, d.Result, d.PPSet,
				byFunc.Interleavings, byFunc.Executed, byFunc.Transitions, byFunc.Result, byFunc.PPSet)
		}
	}
	// The check is not vacuous: without thread1's PPs the space differs.
	if none.Interleavings == byFunc.Interleavings && none.Transitions == byFunc.Transitions {
		t.Errorf("thread1's data-race PPs changed nothing: %d interleavings either way", none.Interleavings)
	}
}

// TestCorrectProgramsNoRaces: correct programs get no data-race
// candidate, under both happens-before modes, over their whole state
// space: not in the reference library (thr_join's wait for the exiting
// thread's amoswap, the mutex's own words, thr_create's tcb), and not for
// a worker's write that main reads after thr_join (mutex_test's count,
// thr_exit_status's status).
func TestCorrectProgramsNoRaces(t *testing.T) {
	for _, name := range []string{"ref/mutex_test", "ref/thr_exit_status", "ref/rwlock_downgrade_read_test", "ref/broadcast_test"} {
		for _, hb := range []string{"limited", "pure"} {
			code, out, errOut, _ := explore(t, fixture(t, name), "--no-store", "--quiet", "--json", "--hb", hb)
			var doc exploreDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK || !doc.Verified {
				t.Fatalf("%s --hb %s: exit %d, %v\n%s", name, hb, code, err, errOut)
			}
			if len(doc.Races) != 0 {
				t.Errorf("%s --hb %s: %d race candidates in a correct program: %+v", name, hb, len(doc.Races), doc.Races)
			}
		}
	}
}
