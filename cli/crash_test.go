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

// crashDoc is what must survive crashes: explore's --json result.
type crashDoc struct {
	Result        string `json:"result"`
	ExitCode      int    `json:"exit_code"`
	Interleavings int    `json:"interleavings"`
	Executed      int    `json:"executed"`
	Transitions   int    `json:"transitions"`
	Complete      bool   `json:"complete"`
	Verified      bool   `json:"verified"`
	Races         []struct {
		Addr              uint64 `json:"addr"`
		A, B              struct{ PC uint64 }
		BothOrder         bool `json:"both_order"`
		FirstInterleaving bool `json:"first_interleaving"`
		Realloc           bool `json:"free_re_malloc"`
		Count             int  `json:"count"`
		StackA            []struct{ Text string }
		StackB            []struct{ Text string }
	} `json:"races"`
	Bug *struct {
		Bug struct{ Message string } `json:"bug"`
	} `json:"bug"`
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

// killAfter kills the started command c with SIGKILL after delay; it is a
// test failure if c ends before (stderr is its error output).
func killAfter(t *testing.T, c *exec.Cmd, delay time.Duration, stderr *bytes.Buffer) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
		t.Fatalf("%v finished before it was killed; stderr:\n%s", c.Args[1:], stderr.String())
	case <-time.After(delay):
		c.Process.Signal(syscall.SIGKILL)
		<-done
	}
}

// TestCrashResume: an exploration of several seconds is killed with
// SIGKILL at 20 random moments, each followed by `landslide resume`; the
// final interleaving count, race candidates and verification equal an
// uninterrupted run's (the crash test).
func TestCrashResume(t *testing.T) {
	prog := fixture(t, "ref/thr_exit_join")
	flags := []string{"--pp", "mutex_lock,mutex_unlock", "--json", "--quiet", "--trace-dir", t.TempDir()}
	code, out, stderr := runCLI(append([]string{"--store", t.TempDir(), "explore", prog}, flags...)...)
	var want crashDoc
	if err := json.Unmarshal([]byte(out), &want); err != nil || code != ExitOK {
		t.Fatalf("uninterrupted: exit %d, %v\n%s\n%s", code, err, out, stderr)
	}
	if want.Interleavings < 10000 {
		t.Fatalf("the fixture explores only %d interleavings: too quick to crash meaningfully", want.Interleavings)
	}

	dir := t.TempDir()
	commit := []string{"--commit-every", "500", "--commit-interval", "100ms"}
	r := rand.New(rand.NewPCG(2026, 11))
	runID := ""
	kills := 0
	var last []byte
	for kills < 20 {
		var c *exec.Cmd
		if runID == "" {
			c = landslide(append(append([]string{"--store", dir, "explore", prog}, flags...), commit...)...)
		} else {
			c = landslide(append([]string{"--store", dir, "resume", runID, "--json", "--quiet", "--trace-dir", t.TempDir()}, commit...)...)
		}
		var o, e bytes.Buffer
		c.Stdout, c.Stderr = &o, &e
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter(t, c, time.Duration(50+r.IntN(900))*time.Millisecond, &e)
		kills++
		if runID == "" {
			runID = recordedRun(t, dir) // was the run recorded before the kill?
		}
		last = e.Bytes()
	}
	if runID == "" {
		t.Fatalf("no run was ever recorded; last stderr:\n%s", last)
	}
	code, out, _ = runCLI("--store", dir, "show", runID, "--json")
	var before struct{ Interleavings int }
	if err := json.Unmarshal([]byte(out), &before); code != 0 || err != nil || before.Interleavings == 0 {
		t.Fatalf("no committed work before the final resume: exit %d %v\n%s", code, err, out)
	}
	c := landslide("--store", dir, "resume", runID, "--json", "--quiet", "--trace-dir", t.TempDir())
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	c.Run()
	var got crashDoc
	if err := json.Unmarshal(o.Bytes(), &got); err != nil {
		t.Fatalf("final resume: %v\n%s\n%s", err, o.String(), e.String())
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) {
		t.Fatalf("after %d kills and resumes:\n%s\nuninterrupted:\n%s", kills, gj, wj)
	}
	// The store says so too.
	code, out, _ = runCLI("--store", dir, "ls", "--json")
	if code != 0 || !bytes.Contains([]byte(out), []byte(`"status": "verified"`)) {
		t.Errorf("ls after the final resume: exit %d\n%s", code, out)
	}
	t.Logf("%d kills; the last resume started after %d interleavings; %d interleavings, %d race candidates, as uninterrupted", kills, before.Interleavings, got.Interleavings, len(got.Races))
}
