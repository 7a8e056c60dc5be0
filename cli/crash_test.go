package cli

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashOutcome is what of explore's --json document must survive
// crashes: everything but the run's ID, its time, where its reports were
// written, and the distinct traces (a resumed run counts those of its own
// interleavings only, and says so: resumedTraces).
func crashOutcome(d ExploreJSON) ExploreJSON {
	d.Run, d.ElapsedSec = "", 0
	var bugs []*BugJSON
	for _, b := range d.Bugs {
		c := *b
		c.Files = nil
		bugs = append(bugs, &c)
	}
	d.Bugs = bugs
	d.Traces, d.TracesAtLeast = 0, false
	return d
}

// resumedTraces checks a resumed run's trace count against the
// uninterrupted run's: a lower bound, said to be one.
func resumedTraces(t *testing.T, resumed, whole ExploreJSON) {
	t.Helper()
	if !resumed.TracesAtLeast || resumed.Traces > whole.Traces || whole.TracesAtLeast || whole.Traces == 0 {
		t.Errorf("traces: resumed %d (lower bound %v), uninterrupted %d (lower bound %v)", resumed.Traces, resumed.TracesAtLeast, whole.Traces, whole.TracesAtLeast)
	}
}

// landslide starts this test binary as the landslide command.
func landslide(args ...string) *exec.Cmd {
	c := exec.Command(os.Args[0], args...)
	c.Env = append(os.Environ(), "LANDSLIDE_TEST_AS_MAIN=1")
	return c
}

// recordedRun is the ID of the one run in the store at dir, "" if none
// was recorded yet: a process killed while it created the store leaves
// one that ls does not know yet (the next open finishes it).
func recordedRun(t *testing.T, dir string) string {
	t.Helper()
	code, out, errOut := runCLI("--store", dir, "ls", "--json")
	if code != 0 && strings.Contains(errOut, "no landslide store") {
		return ""
	}
	var runs []struct{ ID string }
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("ls --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if len(runs) > 1 {
		t.Fatalf("%d runs recorded", len(runs))
	}
	if len(runs) == 1 {
		return runs[0].ID
	}
	return ""
}

// crashLoop starts the exploration (start(""), then start(runID) to resume
// it once the store has recorded its run) and kills it with SIGKILL after
// delay(), up to kills times. An attempt that ends by itself before its
// kill is no failure: a fast machine finishes the remaining work sooner
// than the kill comes, and its output (returned as finished) is then the
// final result the test compares. The delays are drawn relative to the
// uninterrupted run's duration, so the kills land inside the exploration
// on a fast machine and a slow one alike.
func crashLoop(t *testing.T, dir string, kills int, delay func() time.Duration,
	start func(runID string) *exec.Cmd) (runID string, killed int, finished []byte) {
	t.Helper()
	var last []byte
	for killed < kills {
		c := start(runID)
		var o, e bytes.Buffer
		c.Stdout, c.Stderr = &o, &e
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case <-done:
			if runID == "" {
				t.Fatalf("%v finished before its first kill; stderr:\n%s", c.Args[1:], e.String())
			}
			if o.Len() == 0 {
				if strings.Contains(e.String(), "has already finished") {
					// The last kill landed after the final commit and
					// before the report: the store has the result.
					return runID, killed, nil
				}
				t.Fatalf("%v finished with no result (%v) after %d kills; stderr:\n%s", c.Args[1:], c.ProcessState, killed, e.String())
			}
			return runID, killed, o.Bytes()
		case <-time.After(delay()):
			c.Process.Signal(syscall.SIGKILL)
			<-done
		}
		killed++
		if runID == "" {
			runID = recordedRun(t, dir) // was the run recorded before the kill?
		}
		last = e.Bytes()
	}
	if runID == "" {
		t.Fatalf("no run was ever recorded; last stderr:\n%s", last)
	}
	return runID, killed, nil
}

// finalResume resumes runID to its end and returns its standard output.
func finalResume(t *testing.T, dir, runID string) []byte {
	t.Helper()
	c := landslide("--store", dir, "resume", runID, "--json", "--quiet", "--trace-dir", t.TempDir())
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	c.Run()
	if o.Len() == 0 {
		if strings.Contains(e.String(), "has already finished") {
			return nil // see crashLoop
		}
		t.Fatalf("final resume printed nothing; stderr:\n%s", e.String())
	}
	return o.Bytes()
}

// between draws a duration uniformly from [lo, hi) of d.
func between(r *rand.Rand, d time.Duration, lo, hi float64) time.Duration {
	return time.Duration((lo + (hi-lo)*r.Float64()) * float64(d))
}

// TestCrashResume: an exploration of several seconds is killed with
// SIGKILL at 20 random moments, each followed by `landslide resume`; the
// final interleaving count, race candidates and verification equal an
// uninterrupted run's (the crash test). Under the default
// strategy (optimal DPOR: its wakeup trees and sleep sets through the
// kills), and under the dpor strategy.
func TestCrashResume(t *testing.T) {
	t.Parallel() // subprocesses mostly: the package ends the suite alone, on one core otherwise
	crashResume(t, fixture(t, "ref/paradise_lost"), []string{"--pp", "mutex_lock,mutex_unlock"}, nil, 12, 10000, 0.02, 0.12)
}

// TestCrashResumeDPOR: TestCrashResume under the dpor strategy.
func TestCrashResumeDPOR(t *testing.T) {
	t.Parallel() // subprocesses mostly: the package ends the suite alone, on one core otherwise
	crashResume(t, fixture(t, "ref/thr_exit_join"), []string{"--pp", "mutex_lock,mutex_unlock", "--strategy", "dpor"}, nil, 12, 10000, 0.02, 0.12)
}

// TestCrashResumeHTM: the same with a transactional program under retry
// sets: injected aborts, their tags and retry sets survive the kills.
func TestCrashResumeHTM(t *testing.T) {
	t.Parallel() // subprocesses mostly: the package ends the suite alone, on one core otherwise
	// A shorter exploration: later kills, so that commits land between.
	crashResume(t, fixture(t, "htm/htm2"), []string{"--data-race-func", "iteration", "--retry-sets"}, []string{"--", "2", "3"}, 10, 3000, 0.2, 0.6)
}

// crashResume explores prog with flags (and guest arguments), then kills
// and resumes an exploration of it kills times, each after [lo, hi) of
// the uninterrupted run's time, and compares.
func crashResume(t *testing.T, prog string, pflags, guest []string, nkills, minInterleavings int, lo, hi float64) {
	t.Helper()
	flags := append(pflags, "--json", "--quiet", "--trace-dir", t.TempDir())
	began := time.Now()
	code, out, stderr := runCLI(append(append([]string{"--store", t.TempDir(), "explore", prog}, flags...), guest...)...)
	took := time.Since(began)
	var want ExploreJSON
	if err := json.Unmarshal([]byte(out), &want); err != nil || code != ExitOK {
		t.Fatalf("uninterrupted: exit %d, %v\n%s\n%s", code, err, out, stderr)
	}
	if want.Interleavings < minInterleavings {
		t.Fatalf("the fixture explores only %d interleavings: too quick to crash meaningfully", want.Interleavings)
	}

	dir := t.TempDir()
	commit := []string{"--commit-every", "500", "--commit-interval", "100ms"}
	r := rand.New(rand.NewPCG(2026, 11))
	runID, kills, final := crashLoop(t, dir, nkills, func() time.Duration { return between(r, took, lo, hi) },
		func(runID string) *exec.Cmd {
			if runID == "" {
				return landslide(append(append(append([]string{"--store", dir, "explore", prog}, flags...), commit...), guest...)...)
			}
			return landslide(append([]string{"--store", dir, "resume", runID, "--json", "--quiet", "--trace-dir", t.TempDir()}, commit...)...)
		})
	code, out, _ = runCLI("--store", dir, "show", runID, "--json")
	var before struct {
		Interleavings int
		Status        string
	}
	if err := json.Unmarshal([]byte(out), &before); code != 0 || err != nil || before.Interleavings == 0 {
		t.Fatalf("no committed work after the kills: exit %d %v\n%s", code, err, out)
	}
	if final == nil {
		final = finalResume(t, dir, runID)
	}
	if final == nil {
		// Killed between the final commit and the report: the stored
		// result must be the uninterrupted run's.
		if before.Status != "verified" || before.Interleavings != want.Interleavings {
			t.Fatalf("after %d kills the stored run is %s with %d interleavings; uninterrupted: verified, %d", kills, before.Status, before.Interleavings, want.Interleavings)
		}
		t.Logf("%d kills, the last after the final commit: %d interleavings, as uninterrupted", kills, before.Interleavings)
		return
	}
	var got ExploreJSON
	if err := json.Unmarshal(final, &got); err != nil {
		t.Fatalf("final result: %v\n%s", err, final)
	}
	gj, _ := json.Marshal(crashOutcome(got))
	wj, _ := json.Marshal(crashOutcome(want))
	if !bytes.Equal(gj, wj) {
		t.Fatalf("after %d kills and resumes:\n%s\nuninterrupted:\n%s", kills, gj, wj)
	}
	resumedTraces(t, got, want)
	// The store says so too.
	code, out, _ = runCLI("--store", dir, "ls", "--json")
	if code != 0 || !bytes.Contains([]byte(out), []byte(`"status": "verified"`)) {
		t.Errorf("ls after the final resume: exit %d\n%s", code, out)
	}
	t.Logf("%d kills; %d interleavings committed after the last kill; %d interleavings, %d race candidates, as uninterrupted", kills, before.Interleavings, got.Interleavings, len(got.Races))
}
