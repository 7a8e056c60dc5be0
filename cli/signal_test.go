package cli

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// interruptOnce starts c, sends it SIGINT after delay, and returns its exit
// code, how long it took to exit after the signal, and its output.
func interruptOnce(t *testing.T, c *exec.Cmd, delay time.Duration) (int, time.Duration, string, string) {
	t.Helper()
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(delay)
	sent := time.Now()
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	return c.ProcessState.ExitCode(), time.Since(sent), o.String(), e.String()
}

// TestInterruptExploreResume: SIGINT stops an explore within 2 s with exit
// 3, saying how to resume; resume then ends with the uninterrupted result.
func TestInterruptExploreResume(t *testing.T) {
	t.Parallel() // subprocesses mostly: the package ends the suite alone, on one core otherwise
	prog := fixture(t, "ref/paradise_lost")
	flags := []string{"--pp", "mutex_lock,mutex_unlock", "--json", "--quiet", "--trace-dir", t.TempDir()}
	began := time.Now()
	code, want, stderr := runCLI(append([]string{"--store", t.TempDir(), "explore", prog}, flags...)...)
	took := time.Since(began)
	if code != ExitOK {
		t.Fatalf("uninterrupted: exit %d\n%s", code, stderr)
	}
	if took < time.Second {
		t.Fatalf("the uninterrupted exploration takes %s: too quick to interrupt", took)
	}
	dir := t.TempDir()
	code, after, out, errOut := interruptOnce(t, landslide(append([]string{"--store", dir, "explore", prog}, flags...)...), took/3)
	if code != ExitBudget || after > 2*time.Second {
		t.Fatalf("interrupted explore: exit %d after %s (want 3 within 2 s)\n%s\n%s", code, after, out, errOut)
	}
	var doc ExploreJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Stopped != "interrupted" || doc.Run == "" || doc.Executed == 0 {
		t.Fatalf("interrupted explore's report: %v\n%s", err, out)
	}
	final := finalResume(t, dir, doc.Run)
	var g, w ExploreJSON
	json.Unmarshal(final, &g)
	json.Unmarshal([]byte(want), &w)
	resumedTraces(t, g, w)
	gj, _ := json.Marshal(crashOutcome(g))
	wj, _ := json.Marshal(crashOutcome(w))
	if !bytes.Equal(gj, wj) || g.Interleavings == 0 {
		t.Fatalf("resumed after SIGINT:\n%s\nuninterrupted:\n%s", final, want)
	}
	// In text, the interrupted run says where it stopped and how to go on.
	dir = t.TempDir()
	code, _, out, _ = interruptOnce(t, landslide("--store", dir, "explore", prog, "--pp", "mutex_lock,mutex_unlock", "--quiet", "--trace-dir", t.TempDir()), took/3)
	if code != ExitBudget || !bytes.Contains([]byte(out), []byte("Interrupted after")) || !bytes.Contains([]byte(out), []byte("landslide --store "+dir+" resume ")) {
		t.Fatalf("interrupted explore, text: exit %d\n%s", code, out)
	}
}

// TestInterruptQuicksandResume: the same for a deterministic quicksand
// run: SIGINT exits 3 within 2 s, the running job stays resumable, and
// resume ends with the uninterrupted run's job table and verdict.
func TestInterruptQuicksandResume(t *testing.T) {
	t.Parallel() // subprocesses mostly: the package ends the suite alone, on one core otherwise
	prog := fixture(t, "ref/paradise_lost")
	flags := []string{"--interleaving-budget", "20000", "-c", "1", "--json", "--quiet", "--trace-dir", t.TempDir()}
	began := time.Now()
	code, want, stderr := runCLI(append([]string{"--store", t.TempDir(), "quicksand", prog}, flags...)...)
	took := time.Since(began)
	if code == ExitUsage {
		t.Fatalf("uninterrupted: exit %d\n%s", code, stderr)
	}
	if took < time.Second {
		t.Fatalf("the uninterrupted run takes %s: too quick to interrupt", took)
	}
	dir := t.TempDir()
	code2, after, out, errOut := interruptOnce(t, landslide(append([]string{"--store", dir, "quicksand", prog}, flags...)...), took/3)
	if code2 != ExitBudget || after > 2*time.Second {
		t.Fatalf("interrupted quicksand: exit %d after %s (want 3 within 2 s)\n%s\n%s", code2, after, out, errOut)
	}
	var doc QuicksandJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Run == "" {
		t.Fatalf("interrupted quicksand's report: %v\n%s", err, out)
	}
	final := finalResume(t, dir, doc.Run)
	var got, w QuicksandJSON
	if err := json.Unmarshal(final, &got); err != nil {
		t.Fatalf("resume: %v\n%s", err, final)
	}
	json.Unmarshal([]byte(want), &w)
	type jobKey struct {
		ID            int
		PPSet, Status string
		Interleavings int
	}
	keys := func(d QuicksandJSON) (out []jobKey) {
		for _, j := range d.Jobs {
			out = append(out, jobKey{j.ID, j.PPSet, j.Status, j.Interleavings})
		}
		return out
	}
	if got.ExitCode != w.ExitCode || got.Result != w.Result || !slices.Equal(keys(got), keys(w)) ||
		!slices.Equal(got.VerifiedPPSets, w.VerifiedPPSets) || len(got.Bugs) != len(w.Bugs) {
		t.Fatalf("resumed after SIGINT:\n%s\nuninterrupted:\n%s", final, want)
	}
	// The text report of an interrupted run says so, not "you survived"
	// (which it printed over "Interrupted").
	text := []string{"--store", t.TempDir(), "quicksand", prog, "--interleaving-budget", "20000", "-c", "1", "--quiet", "--trace-dir", t.TempDir()}
	if code, _, out, errOut := interruptOnce(t, landslide(text...), took/3); code != ExitBudget ||
		strings.Contains(out, "you survived") || !strings.Contains(out, "No bug was found before the interruption.") {
		t.Errorf("interrupted quicksand, text: exit %d\n%s\n%s", code, out, errOut)
	}
}
