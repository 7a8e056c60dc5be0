package cli

import (
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"landslide/fixtures"
)

// qsDoc is quicksand's --json document (one schema: schema.go).
type qsDoc = QuicksandJSON

// qsOutcome is what of a quicksand document must not depend on crashes
// and resumptions: everything but its times and run ID, where bug
// reports were written, and the traces (kept only by the process that
// found the bug, with the failing thread and stack).
func qsOutcome(d qsDoc) qsDoc {
	d.CPUSeconds, d.Saturation, d.Run = 0, 0, ""
	if d.Clock == "interleavings" {
		d.ElapsedSeconds = 0 // the wall clock
	}
	var bugs []*BugJSON
	for _, b := range d.Bugs {
		c := *b
		c.Files, c.Trace, c.Thread, c.PC, c.Stack, c.Details = nil, nil, 0, 0, nil, nil
		bugs = append(bugs, &c)
	}
	d.Bugs = bugs
	return d
}

func runQuicksandCLI(t *testing.T, args ...string) (int, qsDoc, string) {
	t.Helper()
	all := append([]string{"quicksand"}, args...)
	all = append(all, "--json", "--quiet", "--trace-dir", t.TempDir())
	code, out, errOut := runCLI(all...)
	var d qsDoc
	if code != ExitUsage {
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%v: stdout is not one JSON document: %v\n%s\n%s", args, err, out, errOut)
		}
	}
	return code, d, errOut
}

// TestQuicksandFindsDataRaceBugs: the bug-finding point. Every
// fixture whose bug needs a data-race PP (the paper's Fig. 1 and the
// seeded libraries nonatomic_mutex, exit_before_status,
// rwlock_reader_nolock, sem_wait_fastpath, and the transactional htm1 and
// avl_insert) is found by quicksand, with a
// data-race PP in the failing job's set, and not by --control (one state
// space with every sync PP), which completes it, sees the race candidates
// (or atomic conflicts) and therefore claims no total verification.
func TestQuicksandFindsDataRaceBugs(t *testing.T) {
	n := 0
	for _, f := range fixtures.All() {
		if len(f.RacePPFuncs) == 0 || f.NoLibc || f.Lib == "" || f.Expect == "ok" {
			continue // the x++ programs without a thread library have no sync PPs to seed
		}
		n++
		prog := fixture(t, f.Name)
		code, d, errOut := runQuicksandCLI(t, prog, "--no-store", "--first-bug", "-c", "2", "--budget", "2m")
		if code != ExitBug || len(d.Bugs) != 1 {
			t.Errorf("%s: quicksand exit %d, bugs %+v\n%s", f.Name, code, d.Bugs, errOut)
			continue
		}
		b := d.Bugs[0]
		if b.Kind != f.Expect || !strings.Contains(b.PPSet, "data race at 0x") {
			t.Errorf("%s: bug %q in PP set %s; want a %s bug with a data-race PP", f.Name, b.Message, b.PPSet, f.Expect)
		}
		// The control completes its one state space with budget left: no
		// bug in it (exit 0), and not a total verification.
		code, d, errOut = runQuicksandCLI(t, prog, "--no-store", "--control", "--budget", "2m")
		// (A bug on a stack location: the control never learns that another
		// thread touches it, sees no race there, and calls it verified.)
		if code != ExitOK || d.Result != "ok" || len(d.Bugs) != 0 || d.TotalVerification != (len(d.UncoveredRacePPs)+len(d.UncoveredAtomicPPs) == 0) ||
			len(d.Jobs) != 1 || d.Jobs[0].Status != "complete" {
			t.Errorf("%s: --control: exit %d, %+v\n%s", f.Name, code, d, errOut)
		}
		t.Logf("%s: %s after %.2fs in job %d %s", f.Name, b.Message, *b.FoundAtSeconds, b.Job, b.PPSet)
	}
	if n < 5 {
		t.Errorf("only %d fixtures need a data-race PP", n)
	}
}

// TestQuicksandUsage: contradictory flags are exit 2 with a clear message.
func TestQuicksandUsage(t *testing.T) {
	prog := fixture(t, "ref/fig1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--maximal", "--control"}, "--maximal and --control"},
		{[]string{"--icb"}, "--icb needs --control or --maximal"},
		{[]string{"--preempt-everywhere"}, "--preempt-everywhere needs --control"},
		{[]string{"--data-race-func", "thread1"}, "finds its data-race PPs itself"},
		{[]string{"--pp", "mutex_lock,thread1+4"}, "finds data-race PPs itself"},
		{[]string{"-c", "0"}, "-c 0: must be 1 to 256"},
		{[]string{"--interleaving-budget", "100", "-c", "2"}, "needs -c 1"},
		{[]string{"--interleaving-budget", "100", "-c", "1", "--budget", "1m"}, "two clocks"},
		{[]string{"--hb", "bogus"}, "--hb"},
		{[]string{"--eta-factor", "0"}, "--eta-factor"},
	} {
		code, out, errOut := runCLI(append([]string{"quicksand", prog, "--no-store"}, c.args...)...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 saying %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestQuicksandText: the text report names the bug with its PP set and
// time, the verified PP sets, the PPs at atomic conflicts and the
// walks. Job 21's state space finds fig1's bug first: under the default
// strategy (optimal DPOR), at interleaving 7,817 of the run with the
// walks (the default) and 7,006 without them; under the dpor strategy
// (the default before optimal DPOR was) at 13,727, where a walk finds it
// too (PCT walk 34 of slice 8), and at 12,138 without walks. (Before
// heap blocks were dependences only byte by byte and a thread's own
// stack where a pointer escaped was one, the dpor strategy's jobs were
// larger: a walk found it first, at 11,130, and job 21 at 19,295 without
// walks; job 17 at 15,964 before atomic conflicts were PPs.)
func TestQuicksandText(t *testing.T) {
	t.Parallel() // four runs on one core each (-c 1): the package ends the suite alone otherwise
	for _, c := range []struct {
		flags []string
		want  []string
	}{
		{nil, []string{"BUG FOUND: ", "BUG (job 21,", "after 7817 interleavings", "[WALKS] "}},
		{[]string{"--walk-share", "0"}, []string{"BUG FOUND: ", "BUG (job 21,", "after 7006 interleavings"}},
		{[]string{"--strategy", "dpor"}, []string{"BUG FOUND by a walk: ", "BUG (job 21,", "after 13727 interleavings", "[WALKS] ", "(PCT walk 34 of slice 8 (seed 6, depth 3))"}},
		{[]string{"--strategy", "dpor", "--walk-share", "0"}, []string{"BUG FOUND: ", "BUG (job 21,", "after 12138 interleavings"}},
	} {
		args := append([]string{"quicksand", fixture(t, "ref/fig1"), "--no-store", "--quiet", "-c", "1",
			"--interleaving-budget", "20000", "--trace-dir", t.TempDir()}, c.flags...)
		code, out, errOut := runCLI(args...)
		if code != ExitBug {
			t.Fatalf("%v: exit %d\n%s\n%s", c.flags, code, out, errOut)
		}
		for _, want := range append([]string{"==== FINAL REPORT ====", "BUG (job ", "'data race at 0x", "fig1.c:",
			"Verified PP sets (", "landslide-bug-fig1-job", "core saturation",
			"Preemption points at atomic conflicts (1;", "'atomic conflict at 0x"}, c.want...) {
			if !strings.Contains(out, want) {
				t.Errorf("%v: no %q in\n%s", c.flags, want, out)
			}
		}
		if walks := strings.Contains(out, "PCT"); walks != !slices.Contains(c.flags, "--walk-share") {
			t.Errorf("%v: walks reported: %v", c.flags, walks)
		}
	}
}

// TestQuicksandCrashResume: the crash test. A deterministic run
// (interleaving clock, one worker) of fig1 with suspended jobs and a bug
// is killed with SIGKILL at random moments and resumed each time; the
// final bugs, verified PP sets and every job's outcome equal those of an
// uninterrupted run.
func TestQuicksandCrashResume(t *testing.T) {
	t.Parallel() // subprocesses mostly: the package ends the suite alone, on one core otherwise
	prog := fixture(t, "ref/fig1")
	flags := []string{"-c", "1", "--interleaving-budget", "20000", "--json", "--quiet", "--trace-dir", t.TempDir(),
		"--commit-every", "100", "--commit-interval", "50ms"}
	began := time.Now()
	code, out, stderr := runCLI(append([]string{"--store", t.TempDir(), "quicksand", prog}, flags...)...)
	took := time.Since(began)
	var want qsDoc
	if err := json.Unmarshal([]byte(out), &want); err != nil || code != ExitBug {
		t.Fatalf("uninterrupted: exit %d, %v\n%s\n%s", code, err, out, stderr)
	}
	susp := 0
	for _, j := range want.Jobs {
		susp += j.Suspensions
	}
	if susp == 0 || len(want.Bugs) == 0 {
		t.Fatalf("the uninterrupted run has %d suspensions and %d bugs: no test of either", susp, len(want.Bugs))
	}

	dir := t.TempDir()
	r := rand.New(rand.NewPCG(2026, 1122))
	runID, kills, final := crashLoop(t, dir, 8, func() time.Duration { return between(r, took, 0.05, 0.2) },
		func(runID string) *exec.Cmd {
			if runID == "" {
				return landslide(append([]string{"--store", dir, "quicksand", prog}, flags...)...)
			}
			return landslide("--store", dir, "resume", runID, "--json", "--quiet", "--trace-dir", t.TempDir(),
				"--commit-every", "100", "--commit-interval", "50ms")
		})
	if final == nil {
		final = finalResume(t, dir, runID)
	}
	var got qsDoc
	if err := json.Unmarshal(final, &got); err != nil {
		t.Fatalf("final result: %v\n%s", err, final)
	}
	if g, w := qsOutcome(got), qsOutcome(want); !reflect.DeepEqual(g, w) {
		gj, _ := json.MarshalIndent(g, "", " ")
		wj, _ := json.MarshalIndent(w, "", " ")
		t.Fatalf("after %d kills:\n%s\nuninterrupted:\n%s", kills, gj, wj)
	}
	t.Logf("%d kills; %d jobs, %d suspensions, bug %q at %v interleavings, as uninterrupted", kills, len(got.Jobs), susp, got.Bugs[0].Message, *got.Bugs[0].FoundAtInterleavings)
}
