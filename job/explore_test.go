package job

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"landslide/dpor"
	"landslide/fixtures"
	"landslide/kernel"
	"landslide/race"
	"landslide/record"
	"landslide/report"
	"landslide/sdk"
)

func image(t testing.TB, name string) (fixtures.Fixture, []byte) {
	t.Helper()
	f, img, err := fixtures.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return f, img
}

// sharedPCs are the instructions of fn that access memory other than the
// thread's own stack frame (sp/fp-relative ones excluded).
func sharedPCs(t testing.TB, img []byte, fn string) []uint64 {
	t.Helper()
	all, err := kernel.MemoryPCs(img, []string{fn})
	if err != nil {
		t.Fatal(err)
	}
	every, err := kernel.SharedAccessPCs(img)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, pc := range all {
		if slices.Contains(every, pc) {
			out = append(out, pc)
		}
	}
	return out
}

// explored runs DPOR directly on a kernel, past bugs, and collects the
// outcome of every interleaving: the output and exit status of a complete
// execution, or the failure (kind and message) that cut it short.
func explored(t testing.TB, img []byte, kcfg kernel.Config, opt dpor.Options) (*dpor.Result, map[string]int) {
	t.Helper()
	k, err := kernel.New(img, kcfg)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	opt.KeepGoing = true
	opt.NoDepthHeuristic = true // its verdict depends on the order of exploration
	opt.OnBranch = func(b *dpor.Branch) dpor.Stop {
		var o string
		switch {
		case b.SleepBlocked, b.Blocked:
			return dpor.Continue // not an end of the program
		case b.Bug != nil:
			o = fmt.Sprintf("%s: %s", b.Bug.Kind, b.Bug.Message)
		case b.Budget:
			o = "instruction budget"
		default:
			o = fmt.Sprintf("exit %d: %q", k.ExitStatus(), k.Output())
		}
		outcomes[o]++
		return dpor.Continue
	}
	x, err := dpor.New(k, opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res, outcomes
}

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestFig24ExactCounts: the thesis's Figure 2.4 on the emulator. Two
// threads each run x++ (lw, addiw, sw); with a PP before the add and before
// the store, each thread's run after the thread_create PP is exactly the
// thesis's three events (load; add; store), so the tree is the figure's:
// C(6,3) = 20 interleavings without reduction, 6 with DPOR (Fig. 3.6), 4
// with sleep sets (§3.4.2: A, B, C, K).
func TestFig24ExactCounts(t *testing.T) {
	_, img := image(t, "nolib/fig2_4_xplusplus")
	acc := sharedPCs(t, img, "incr")
	if len(acc) != 2 {
		t.Fatalf("incr has %d shared accesses (%x), want the load and the store of x", len(acc), acc)
	}
	load, store := acc[0], acc[1]
	if store != load+8 {
		t.Fatalf("incr is not lw; addiw; sw: load 0x%x store 0x%x", load, store)
	}
	kcfg := kernel.Config{SyncPPs: []string{}, DataRacePCs: []uint64{load + 4, store}}
	for _, c := range []struct {
		name string
		opt  dpor.Options
		want int
	}{
		{"no reduction (Fig. 2.4)", dpor.Options{Spec: dpor.Spec{Strategy: "full"}}, 20},
		{"thesis DPOR (Fig. 3.6)", dpor.Options{Spec: dpor.Spec{NoSleepSets: true, AllPairs: true}}, 6},
		{"DPOR, direct races", dpor.Options{Spec: dpor.Spec{NoSleepSets: true}}, 6},
		{"DPOR + sleep sets", dpor.Options{}, 4},
		{"thesis DPOR + sleep sets", dpor.Options{Spec: dpor.Spec{AllPairs: true}}, 4},
	} {
		res, outcomes := explored(t, img, kcfg, c.opt)
		if res.Interleavings != c.want || !res.Complete {
			t.Errorf("%s: %d interleavings (complete %v), want %d", c.name, res.Interleavings, res.Complete, c.want)
		}
		// No output, no bug: every interleaving ends the same way.
		if len(outcomes) != 1 {
			t.Errorf("%s: outcomes %v", c.name, outcomes)
		}
	}
}

// bruteLong adds small/posix_locked with every shared access a PP to
// TestSoundnessBruteForce (318,547 interleavings to enumerate, about 45 s
// here): small/no_join's every-access run covers the mode in the suite.
var bruteLong = flag.Bool("brute.long", false, "TestSoundnessBruteForce: small/posix_locked with every shared access a PP too")

// soundnessPrograms are the small programs of the brute-force test.
func soundnessPrograms() []string {
	var out []string
	for _, f := range fixtures.All() {
		if strings.HasPrefix(f.Name, "small/") {
			out = append(out, f.Name)
		}
	}
	return out
}

// TestSoundnessBruteForce: on small programs (2–3 threads, locks,
// condition variables, semaphores, exit/join; P2 and POSIX threads, the
// latter also with every shared access a PP), every reduction reaches
// exactly the outcomes (final output and status, or failure) that
// enumerating every interleaving reaches, and explores no more
// interleavings.
func TestSoundnessBruteForce(t *testing.T) {
	t.Parallel() // independent explorations: the suite's longest package uses both cores
	names := soundnessPrograms()
	if len(names) < 10 {
		t.Fatalf("only %d small programs", len(names))
	}
	type program struct {
		name string
		kcfg kernel.Config
	}
	var progs []program
	for _, name := range names {
		progs = append(progs, program{name, kernel.Config{}})
		if name == "small/no_join" {
			// And with every shared access a PP: each read and write of x
			// and each output is an event the exit can cut off.
			progs = append(progs, program{name, kernel.Config{EveryAccess: true, MaxPPs: kernel.TooDeepPreemptEverywhere}})
		}
		if name == "small/posix_locked" && *bruteLong {
			// And with every shared access a PP (318,547 interleavings
			// to enumerate; the reductions but ICB and dpor without
			// sleep sets, which take minutes here).
			progs = append(progs, program{name, kernel.Config{EveryAccess: true, MaxPPs: kernel.TooDeepPreemptEverywhere}})
		}
	}
	for _, p := range progs {
		name, kcfg := p.name, p.kcfg
		if kcfg.EveryAccess {
			name += " (every access)"
		}
		_, img := image(t, p.name)
		full, want := explored(t, img, kcfg, dpor.Options{Spec: dpor.Spec{Strategy: "full"}})
		if !full.Complete {
			t.Fatalf("%s: enumeration incomplete", name)
		}
		if len(want) < 2 {
			t.Errorf("%s: every interleaving ends the same way (%v): a weak test", name, keys(want))
		}
		for _, v := range []struct {
			name string
			opt  dpor.Options
		}{
			{"dpor", dpor.Options{}},
			{"dpor without sleep sets", dpor.Options{Spec: dpor.Spec{NoSleepSets: true}}},
			{"thesis dpor", dpor.Options{Spec: dpor.Spec{AllPairs: true, NoSleepSets: true}}},
			{"icb to the maximal bound", dpor.Options{Spec: dpor.Spec{Strategy: "icb"}}},
			{"optimal dpor", dpor.Options{Spec: dpor.Spec{Strategy: "optimal"}}},
			{"explore's default (optimal dpor, falling back to dpor)", dpor.Options{Spec: dpor.Spec{Strategy: "optimal", Fallback: true}}},
		} {
			if kcfg.EveryAccess && v.name != "dpor" && !strings.HasPrefix(v.name, "optimal dpor") && !strings.HasPrefix(v.name, "explore's") {
				continue
			}
			res, got := explored(t, img, kcfg, v.opt)
			if !res.Complete {
				t.Errorf("%s, %s: incomplete", name, v.name)
				continue
			}
			if !slices.Equal(keys(got), keys(want)) {
				t.Errorf("%s, %s: outcomes\n%v\nenumeration:\n%v", name, v.name, keys(got), keys(want))
			}
			if res.Interleavings > full.Interleavings {
				t.Errorf("%s, %s: %d interleavings, more than the %d of enumeration", name, v.name, res.Interleavings, full.Interleavings)
			}
		}
		t.Logf("%s: %d interleavings, %d outcomes", name, full.Interleavings, len(want))
	}
}

// TestPPSubsetMonotonic is the metamorphic rule Quicksand relies on: a job
// whose PP set is a subset of another's never explores more
// interleavings.
func TestPPSubsetMonotonic(t *testing.T) {
	for _, name := range []string{"ref/fig1", "ref/fig2_6b", "small/locked_counter", "small/racy_counter", "small/sem_lock", "small/three_threads", "ref/broadcast_test"} {
		_, img := image(t, name)
		var race []uint64
		for _, fn := range []string{"thread1", "thread2", "worker", "child"} {
			if _, _, ok := kernelSymbol(t, img, fn); ok {
				race = append(race, sharedPCs(t, img, fn)...)
			}
		}
		f := thesisFilters
		chain := []kernel.Config{
			{SyncPPs: []string{}, Filters: f},
			{SyncPPs: []string{"mutex_lock"}, Filters: f},
			{SyncPPs: []string{"mutex_lock", "mutex_unlock"}, Filters: f},
			{SyncPPs: []string{"mutex_lock", "mutex_unlock"}, DataRacePCs: race, Filters: f},
		}
		if len(race) > 1 {
			chain = slices.Insert(chain, 3, kernel.Config{SyncPPs: []string{"mutex_lock", "mutex_unlock"}, DataRacePCs: race[:1], Filters: f})
		}
		prev := 0
		for i, kc := range chain {
			res, _ := explored(t, img, kc, dpor.Options{Spec: dpor.Spec{MaxInterleavings: 200000}})
			if !res.Complete {
				t.Fatalf("%s, PP set %d: incomplete", name, i)
			}
			if res.Interleavings < prev {
				t.Errorf("%s: PP set %d (%v + %d race PPs) explores %d interleavings, fewer than its subset's %d",
					name, i, kc.SyncPPs, len(kc.DataRacePCs), res.Interleavings, prev)
			}
			prev = res.Interleavings
		}
	}
}

func kernelSymbol(t testing.TB, img []byte, name string) (uint64, uint64, bool) {
	k, err := kernel.New(img, kernel.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return k.Symbols().Lookup(name)
}

// thesisFilters leave out the PPs inside thr_create, thr_exit and thr_join,
// as the thesis's evaluation did for its P2 tests (§4.5: "for mutex_test,
// paradise_lost and paraguay, the thr_create/exit/join PPs are excluded"):
// the test programs' own synchronisation is what these tests are about.
var thesisFilters = []kernel.Filter{{Func: "thr_create"}, {Func: "thr_exit"}, {Func: "thr_join"}}

// seededPPs is the PP set a seeded-bug fixture is caught with: the sync
// PPs, plus data-race PPs in the functions the fixture names.
func seededPPs(t testing.TB, f fixtures.Fixture, img []byte) kernel.Config {
	pcs, err := kernel.MemoryPCs(img, f.RacePPFuncs)
	if err != nil {
		t.Fatal(err)
	}
	return kernel.Config{DataRacePCs: pcs}
}

// TestSeededBugsFound: every seeded-bug library (and the thesis's
// motivating fig1) is caught by explore, with the right kind of bug, by
// the test program that exposes it, under the sync PP set or the
// data-race PPs its bug needs.
func TestSeededBugsFound(t *testing.T) {
	n := 0
	for _, f := range fixtures.All() {
		if f.Expect == "ok" || f.NoLibc || strings.HasPrefix(f.Name, "bugs/") || strings.HasPrefix(f.Name, "small/") {
			continue
		}
		want, _ := record.ParseBugKind(f.Expect)
		_, img := image(t, f.Name)
		// ICB finds the bugs that need few preemptions first (thesis
		// §3.4.5); run to the maximal bound it is still complete.
		res, err := Run(context.Background(), Config{Spec: Spec{Program: f.Path(), Kernel: seededPPs(t, f, img), Spec: dpor.Spec{Strategy: "icb", MaxInterleavings: 50000}}, Image: img})
		if err != nil {
			t.Fatal(err)
		}
		n++
		if res.Bug == nil || res.Bug.Kind != want {
			t.Errorf("%s: after %d interleavings: bug %v, want %s", f.Name, res.Executed, res.Bug, want)
			continue
		}
		if res.Trace == nil || len(res.Trace.Steps) == 0 || !res.Trace.Steps[len(res.Trace.Steps)-1].Failure {
			t.Errorf("%s: no trace ending at the failure", f.Name)
		}
		t.Logf("%s: %s after %d interleavings", f.Name, res.Bug.Kind, res.Executed)
	}
	if n < 6 {
		t.Fatalf("only %d seeded-bug fixtures", n)
	}
}

// candidateOn finds a race candidate on the named global.
func candidateOn(t testing.TB, res *Result, img []byte, sym string) *RaceReport {
	addr, size, ok := kernelSymbol(t, img, sym)
	if !ok {
		t.Fatalf("no symbol %s", sym)
	}
	for _, r := range res.Races {
		if r.A.Addr >= addr && r.A.Addr < addr+max(size, 1) {
			return r
		}
	}
	return nil
}

// TestFig1NeedsDataRacePP: the Quicksand paper's Figure 1. With PPs only at
// the sync functions the state space completes without finding the lost
// update, but Limited HB reports the race on count already in that first
// state space (on its first interleaving); with data-race PPs at the racing
// accesses the assertion fails.
func TestFig1NeedsDataRacePP(t *testing.T) {
	f, img := image(t, "ref/fig1")
	res, err := Run(context.Background(), Config{Spec: Spec{Program: f.Path(), HB: race.Limited, Kernel: kernel.Config{Filters: thesisFilters}}, Image: img})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.Bug != nil {
		t.Fatalf("sync PPs only: verified %v, bug %v; the bug needs a data-race PP", res.Verified, res.Bug)
	}
	c := candidateOn(t, res, img, "count")
	if c == nil {
		t.Fatalf("Limited HB reports no race on count; candidates: %v", res.Races)
	}
	if !c.FirstInterleaving {
		t.Errorf("the race on count was not seen on the first interleaving: %v", c.Candidate)
	}
	if len(c.StackA) == 0 || len(c.StackB) == 0 {
		t.Errorf("race without stacks: %v", c)
	}
	// One side is thread1's plain access, the other thread2's xadd (inside
	// atomic_fetch_add, called from thread2).
	inStack := func(fs []report.Frame, fn string) bool {
		for _, f := range fs {
			if f.Func == fn {
				return true
			}
		}
		return false
	}
	if !(inStack(c.StackA, "thread1") && inStack(c.StackB, "thread2")) && !(inStack(c.StackA, "thread2") && inStack(c.StackB, "thread1")) {
		t.Errorf("race on count not between thread1 and thread2: %v / %v", c.StackA, c.StackB)
	}
	// Data-race PPs at the accesses to count expose the bug (the paper's
	// PPs: before thread 1's store and before thread 2's assertion).
	var pcs []uint64
	for _, r := range res.Races {
		if r == c || r.A.Addr == c.A.Addr {
			pcs = append(pcs, r.A.PC, r.B.PC)
		}
	}
	pcs = append(pcs, sharedPCs(t, img, "thread1")...)
	pcs = append(pcs, sharedPCs(t, img, "thread2")...)
	slices.Sort(pcs)
	kc := kernel.Config{DataRacePCs: slices.Compact(pcs), Filters: thesisFilters}
	bug, err := Run(context.Background(), Config{Spec: Spec{Program: f.Path(), Kernel: kc, Spec: dpor.Spec{Strategy: "icb"}}, Image: img})
	if err != nil {
		t.Fatal(err)
	}
	if bug.Bug == nil || bug.Bug.Kind != record.BugAssert {
		t.Fatalf("with data-race PPs at %x: bug %v, want the assertion", kc.DataRacePCs, bug.Bug)
	}
}

// TestFig26PureVsLimited: the thesis's Figure 2.6. (a) x++ before a
// critical section in one thread and after it in the other: a true
// potential race that Pure HB misses on the first interleaving (the
// unlock → lock edge orders it) and Limited HB reports there. (b) the
// second x++ runs only if the first thread's critical section came first:
// there is no race in any interleaving, Pure HB reports none, Limited HB
// reports it (its documented false positive).
func TestFig26PureVsLimited(t *testing.T) {
	run := func(name string, mode race.Mode) (*Result, []byte) {
		f, img := image(t, name)
		res, err := Run(context.Background(), Config{Spec: Spec{Program: f.Path(), HB: mode, Kernel: kernel.Config{Filters: thesisFilters}}, Image: img})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Verified {
			t.Fatalf("%s: not verified: %v", name, res.Bug)
		}
		return res, img
	}
	la, img := run("ref/fig2_6a", race.Limited)
	if c := candidateOn(t, la, img, "x"); c == nil || !c.FirstInterleaving {
		t.Errorf("2.6a, Limited HB: race on x %v, want it reported from the first interleaving", c)
	}
	pa, _ := run("ref/fig2_6a", race.Pure)
	if c := candidateOn(t, pa, img, "x"); c != nil && c.FirstInterleaving {
		t.Errorf("2.6a, Pure HB reported x on the first interleaving, where unlock → lock orders it: %v", c.Candidate)
	}
	lb, img := run("ref/fig2_6b", race.Limited)
	if c := candidateOn(t, lb, img, "x"); c == nil {
		t.Errorf("2.6b, Limited HB: no race on x, want its documented false positive")
	}
	pb, _ := run("ref/fig2_6b", race.Pure)
	if c := candidateOn(t, pb, img, "x"); c != nil {
		t.Errorf("2.6b, Pure HB reported x, which no interleaving can race: %v", c.Candidate)
	}
}

// TestReallocFlagged: a write to a freed block and a write to the block
// re-malloc'ed at the same address race in address only: the candidate is
// flagged as the free-re-malloc pattern.
func TestReallocFlagged(t *testing.T) {
	f, img := image(t, "ref/realloc_race")
	res, err := Run(context.Background(), Config{Spec: Spec{Program: f.Path(), Kernel: kernel.Config{DataRacePCs: append(sharedPCs(t, img, "thread1"), sharedPCs(t, img, "thread2")...), Filters: thesisFilters}, Spec: dpor.Spec{MaxInterleavings: 3000}}, Image: img})
	if err != nil {
		t.Fatal(err)
	}
	flagged := 0
	for _, r := range res.Races {
		if r.Realloc {
			flagged++
			if r.A.Addr < kernel.HeapBase {
				t.Errorf("realloc candidate outside the heap: %v", r.Candidate)
			}
		}
	}
	if flagged == 0 {
		t.Fatalf("no candidate flagged free-re-malloc among %d", len(res.Races))
	}
}

// TestReferenceLibraryVerifies: the correct library's state space
// completes with no bug on every shipped test, with PPs at mutex_lock and
// mutex_unlock (and, as in the thesis's evaluation, none inside
// thr_create/thr_exit/thr_join; BENCHMARKS.md has the times without that
// filter). The largest spaces are left to the benchmark.
func TestReferenceLibraryVerifies(t *testing.T) {
	t.Parallel() // independent explorations: the suite's longest package uses both cores
	n := 0
	for _, f := range fixtures.All() {
		if f.Expect != "ok" || f.Lib != "ref" || !strings.HasPrefix(f.Name, "ref/") {
			continue
		}
		switch f.Name {
		case "ref/paraguay", "ref/paradise_lost", "ref/broadcast_two_waiters":
			continue // 10^5-10^6 interleavings: go run ./bench/cmd/refverify (BENCHMARKS.md)
		case "ref/lastzero_thr", "ref/indexer_thr":
			// More than 10^5 with the library's own PPs: benchmarks for
			// every access a PP (check.TestThreadLibraryTraceCounts).
			continue
		}
		_, img := image(t, f.Name)
		res, err := Run(context.Background(), Config{Spec: Spec{Program: f.Path(), Kernel: kernel.Config{SyncPPs: []string{"mutex_lock", "mutex_unlock"}, Filters: thesisFilters}, Spec: dpor.Spec{MaxInterleavings: 100000}}, Image: img})
		if err != nil {
			t.Fatal(err)
		}
		n++
		if !res.Verified {
			t.Errorf("%s: not verified after %d interleavings: bug %v, stopped %q", f.Name, res.Executed, res.Bug, res.Stopped)
			continue
		}
		t.Logf("%s: verified, %d interleavings", f.Name, res.Interleavings)
	}
	if n < 8 {
		t.Fatalf("only %d reference tests", n)
	}
}

// TestNoPPBetweenLRAndSC: a data-race PP at the sc.w of the SDK's
// atomic_compare_swap (an atomic conflict Quicksand reports) once made
// every switch there clear the LR's reservation, so the SC failed, its
// loop came back to the same state with nothing written, and the spin
// rule blocked a thread that was making progress: indexer_thr (correct)
// was reported deadlocked within a few interleavings under every
// seeded-bug library of the Quicksand evaluation. The PP is now at the
// LR, the pair one atomic step: no bug in the first 300 interleavings,
// and some of them preempt there.
func TestNoPPBetweenLRAndSC(t *testing.T) {
	_, img := image(t, "ref/indexer_thr")
	pcs, err := kernel.SharedMemoryPCs(img, []string{"atomic_compare_swap"})
	if err != nil || len(pcs) != 2 {
		t.Fatalf("atomic_compare_swap's accesses: %x, %v; want its lr.w and sc.w", pcs, err)
	}
	spec := Spec{Kernel: kernel.Config{SyncPPs: []string{}, DataRacePCs: pcs[1:]}}
	spec.MaxInterleavings = 300
	res, err := Run(context.Background(), Config{Spec: spec, Image: img})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bug != nil {
		t.Fatalf("%s after %d interleavings", res.Bug.Message, res.Executed)
	}
	if res.Executed != 300 {
		t.Fatalf("%d interleavings, want 300 (the state space is far larger)", res.Executed)
	}
}

// TestLRSCPPsAgainstEveryAccess: the oracle for placing a data-race PP
// at an SC on its LR (and none while the reservation is held). cas_log
// (testdata, built here) takes tickets with CAS loops; with a PP at every
// shared access of worker, the SC's among them, full enumeration reaches
// exactly the outcomes (the two orders of the increments) that dpor
// reaches with every shared access an event, where an LR/SC pair is one.
// Before the change the SC's PP made the SC fail after a switch and the
// spin rule called the retrying thread deadlocked.
func TestLRSCPPsAgainstEveryAccess(t *testing.T) {
	if !sdk.HaveClang() {
		if os.Getenv("LANDSLIDE_NO_CLANG") == "1" {
			t.Skip("clang/ld.lld not installed and LANDSLIDE_NO_CLANG=1")
		}
		t.Fatal("this test needs clang and ld.lld (apt-get install clang lld); set LANDSLIDE_NO_CLANG=1 to skip it")
	}
	elf := filepath.Join(t.TempDir(), "cas_log.elf")
	if err := sdk.Build(sdk.Options{Sources: []string{"testdata/cas_log.c"}, Output: elf, Posix: true, ProgramOpt: "-O0"}); err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(elf)
	if err != nil {
		t.Fatal(err)
	}
	pcs := sharedPCs(t, img, "worker")
	full, got := explored(t, img, kernel.Config{DataRacePCs: pcs}, dpor.Options{Spec: dpor.Spec{Strategy: "full"}})
	_, want := explored(t, img, kernel.Config{EveryAccess: true, MaxPPs: kernel.TooDeepPreemptEverywhere}, dpor.Options{})
	if !full.Complete || len(want) != 2 || !slices.Equal(keys(got), keys(want)) {
		t.Fatalf("PPs at worker's %d accesses, full enumeration (complete %v): %v; every access an event: %v", len(pcs), full.Complete, keys(got), keys(want))
	}
}
