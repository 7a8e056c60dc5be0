package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRunReplayKeepsFlags: the replay line of `landslide run` repeats
// the flags that shaped the execution (data-race PPs, abort codes, weak
// atomicity, the program's arguments), so running it gives the same
// execution. Here: counter(2,2) under weak atomicity, where thread 3's
// CONFLICT-aborted atomic add lands inside thread 2's second transaction
// and is lost.
func TestRunReplayKeepsFlags(t *testing.T) {
	prog := fixture(t, "htm/counter")
	args := []string{"run", prog, "-A", "-W", "--data-race-func", "iteration", "--json",
		"--schedule", "1,1,1,2,2,2,2,3,3:4,2,2,2,3,2", "--", "2", "2", "check"}
	code, out, errOut := runCLI(args...)
	var first RunJSON
	if err := json.Unmarshal([]byte(out), &first); err != nil || code != ExitBug {
		t.Fatalf("run: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	for _, flag := range []string{"--abort-codes", "--weak-atomicity", "--data-race-pp", "-- 2 2 check"} {
		if !strings.Contains(first.Replay, flag) {
			t.Errorf("replay line %q lacks %s", first.Replay, flag)
		}
	}
	replay, ok := strings.CutPrefix(first.Replay, "landslide ")
	if !ok {
		t.Fatalf("replay line %q", first.Replay)
	}
	f := strings.Fields(replay)
	i := len(f)
	for j, a := range f {
		if a == "--" {
			i = j
			break
		}
	}
	code, out, errOut = runCLI(append(append(f[:i:i], "--json"), f[i:]...)...)
	var again RunJSON
	if err := json.Unmarshal([]byte(out), &again); err != nil || code != ExitBug {
		t.Fatalf("replay: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if again.TraceHash != first.TraceHash || len(again.Bugs) != 1 || len(first.Bugs) != 1 || again.Bugs[0].Message != first.Bugs[0].Message {
		t.Errorf("the replay line runs differently: %s (%v), want %s (%v)", again.TraceHash, again.Bugs, first.TraceHash, first.Bugs)
	}
}

// TestOptimalTMCaveat: optimal DPOR on a program with transactions,
// where it is not exact (it can miss interleavings in which transactions
// abort), falls back to the dpor strategy, which explores them all, and
// says so on stdout (in text) or in `fallback` (JSON), with no caveat:
// by default and with --strategy optimal. With --no-fallback it keeps
// going and says on stderr, in text and JSON mode alike, that it is not
// exact. On a program without transactions it says neither.
func TestOptimalTMCaveat(t *testing.T) {
	counter, plain := fixture(t, "htm/counter"), fixture(t, "ref/fig1")
	for _, c := range []struct {
		args               []string
		caveat, fallback   bool
		interleavings, all int // in JSON (0: text)
	}{
		{[]string{"explore", counter, "--strategy", "optimal", "--no-fallback", "--no-store", "--", "2", "1"}, true, false, 0, 0},
		// One execution sleep-set blocked: its guarantee does not hold.
		{[]string{"explore", counter, "--strategy", "optimal", "--no-fallback", "--no-store", "--json", "--", "2", "1"}, true, false, 8, 9},
		{[]string{"explore", counter, "--no-store", "--", "2", "1"}, false, true, 0, 0},
		// The dpor strategy's 8 interleavings, after optimal DPOR's
		// first execution.
		{[]string{"explore", counter, "--no-store", "--json", "--", "2", "1"}, false, true, 8, 9},
		{[]string{"explore", counter, "--strategy", "optimal", "--no-store", "--", "2", "1"}, false, true, 0, 0},
		{[]string{"explore", plain, "--no-store"}, false, false, 0, 0},
		{[]string{"explore", plain, "--strategy", "optimal", "--no-store", "--json"}, false, false, 291, 291},
	} {
		code, out, errOut := runCLI(c.args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", c.args, code, out, errOut)
		}
		if got := strings.Contains(errOut, "optimal DPOR is not exact on programs with transactions"); got != c.caveat {
			t.Errorf("%v: caveat %v, want %v; stderr:\n%s", c.args, got, c.caveat, errOut)
		}
		if c.interleavings == 0 {
			if got := strings.Contains(out, "Strategy: optimal DPOR fell back to the dpor strategy, which explored again from the start (a thread reached an _xbegin"); got != c.fallback {
				t.Errorf("%v: fallback %v, want %v; stdout:\n%s", c.args, got, c.fallback, out)
			}
			continue
		}
		var doc ExploreJSON
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
		if (doc.Fallback != "") != c.fallback || doc.Interleavings != c.interleavings || doc.Executed != c.all {
			t.Errorf("%v: fallback %q, %d interleavings of %d executions; want fallback %v, %d of %d", c.args, doc.Fallback, doc.Interleavings, doc.Executed, c.fallback, c.interleavings, c.all)
		}
	}
}

// TestQuicksandCaveats: Quicksand with optimal DPOR and --no-fallback
// on a program with transactions says, as explore does, that the
// exploration is not exact there: on stderr, in its verdict, which names
// the jobs, and in JSON, for the run and for each job that met a
// transaction; with its fallback (each job's state space explored again
// by the dpor strategy), with the default strategy, or on a program
// without transactions, it says nothing of the kind. explore's JSON
// carries the caveat too.
func TestQuicksandCaveats(t *testing.T) {
	counter, plain := fixture(t, "htm/counter"), fixture(t, "ref/atomic_fetch_add")
	const caveat = "optimal DPOR is not exact on programs with transactions"
	for _, c := range []struct {
		prog       string
		strategy   string
		noFallback bool
		want       bool
	}{
		{counter, "optimal", true, true},
		{counter, "optimal", false, false}, // each job falls back to dpor
		{counter, "dpor", false, false},
		{plain, "optimal", true, false},
	} {
		args := []string{"quicksand", c.prog, "--strategy", c.strategy, "--no-store", "--quiet", "--interleaving-budget", "100000"}
		if c.noFallback {
			args = append(args, "--no-fallback")
		}
		var progArgs []string
		if c.prog == counter {
			progArgs = []string{"--", "2", "1"}
		}
		code, out, errOut := runCLI(append(args[:len(args):len(args)], progArgs...)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		if got := strings.Contains(errOut, "landslide: warning: Caveat (jobs 1, 2,") && strings.Contains(errOut, caveat); got != c.want {
			t.Errorf("%v: stderr caveat %v, want %v; stderr:\n%s", args, got, c.want, errOut)
		}
		if got := strings.Contains(out, "completed with no bug, and it covered every data-race candidate") &&
			strings.Contains(out, ". Caveat (jobs 1, 2,"); got != c.want {
			t.Errorf("%v: verdict caveat %v, want %v; stdout:\n%s", args, got, c.want, out)
		}
		_, out, _ = runCLI(append(append(args[:len(args):len(args)], "--json"), progArgs...)...)
		var doc QuicksandJSON
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v --json: %v\n%s", args, err, out)
		}
		if got := len(doc.Caveats) == 1 && strings.HasPrefix(doc.Caveats[0], caveat); got != c.want {
			t.Errorf("%v --json: caveats %q", args, doc.Caveats)
		}
		for _, j := range doc.Jobs {
			if (j.Caveat != "") != c.want {
				t.Errorf("%v --json: job %d (%s): caveat %q", args, j.ID, j.Status, j.Caveat)
			}
		}
	}
	_, out, _ := runCLI("explore", counter, "--strategy", "optimal", "--no-fallback", "--no-store", "--json", "--", "2", "1")
	var doc ExploreJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil || !strings.HasPrefix(doc.Caveat, caveat) {
		t.Errorf("explore --json: caveat %q (%v)", doc.Caveat, err)
	}
}

// TestRetrySetsCaveat: explore with retry sets on a program with
// transactions warns that they are not exact
// (dpor.TestRetrySetsReachEveryFinalState), on stderr; without them it does
// not.
func TestRetrySetsCaveat(t *testing.T) {
	counter := fixture(t, "htm/counter")
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"explore", counter, "--retry-sets", "--no-store", "--", "2", "1"}, true},
		{[]string{"explore", counter, "--retry-sets", "--no-store", "--json", "--", "2", "1"}, true},
		{[]string{"explore", counter, "--no-store", "--", "2", "1"}, false},
	} {
		_, _, errOut := runCLI(c.args...)
		if got := strings.Contains(errOut, "retry sets (-R) are not exact"); got != c.want {
			t.Errorf("%v: caveat %v, want %v; stderr:\n%s", c.args, got, c.want, errOut)
		}
	}
}

// TestShowCountsInterleavings: `show` and `ls` count a stored run's
// interleavings as `explore` does, without the executions stopped at a
// self-abort (htm2 stops some); they used to sum the executions, which
// TestCrashResumeHTM caught when its last kill came after the final
// commit.
func TestShowCountsInterleavings(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI("--store", dir, "explore", fixture(t, "htm/htm2"), "--data-race-func", "iteration", "--json", "--quiet", "--", "2", "2")
	var ex ExploreJSON
	if err := json.Unmarshal([]byte(out), &ex); err != nil || code != ExitOK || ex.SelfAborts == 0 {
		t.Fatalf("explore: exit %d, %v, %d self-aborts\n%s\n%s", code, err, ex.SelfAborts, out, errOut)
	}
	for _, args := range [][]string{{"show", ex.Run, "--json"}, {"ls", "--json"}} {
		code, out, _ := runCLI(append([]string{"--store", dir}, args...)...)
		var shown struct{ Interleavings int }
		if args[0] == "ls" {
			var runs []struct{ Interleavings int }
			if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 {
				t.Fatalf("ls: %v\n%s", err, out)
			}
			shown = runs[0]
		} else if err := json.Unmarshal([]byte(out), &shown); err != nil {
			t.Fatalf("show: %v\n%s", err, out)
		}
		if code != 0 || shown.Interleavings != ex.Interleavings {
			t.Errorf("%s: exit %d, %d interleavings; explore: %d (%d executed)", args[0], code, shown.Interleavings, ex.Interleavings, ex.Executed)
		}
	}
}
