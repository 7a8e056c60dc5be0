package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"landslide/store"
)

// TestWatchRunningStore: ls and show on a store a running exploration
// holds print its live progress (exit 0) instead of refusing; once the
// process is killed (kill -9: the lock is free, the run record still says
// running), they say the run was interrupted and how to resume it.
func TestWatchRunningStore(t *testing.T) {
	dir := t.TempDir()
	c := landslide("--store", dir, "explore", fixture(t, "ref/paraguay"), "--quiet",
		"--max-interleavings", "1000000", "--trace-dir", t.TempDir())
	var e bytes.Buffer
	c.Stderr = &e
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Process.Kill()
	// The status file, once it shows progress.
	var live store.Live
	deadline := time.Now().Add(time.Minute)
	for {
		data, err := os.ReadFile(filepath.Join(dir, store.LiveFile))
		if err == nil && json.Unmarshal(data, &live) == nil && len(live.Runs) == 1 && live.Runs[0].Interleavings > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no live progress after a minute; stderr:\n%s", e.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	id := live.Runs[0].ID
	if live.PID != c.Process.Pid || live.Command != "explore" {
		t.Errorf("status file: pid %d command %q, want %d explore", live.PID, live.Command, c.Process.Pid)
	}

	code, out, errOut := storeCLI(dir, "ls")
	if code != ExitOK || !strings.Contains(out, id) || !strings.Contains(out, "running") || !strings.Contains(out, "interleavings, ") ||
		!strings.Contains(errOut, "in use by landslide process "+strconv.Itoa(c.Process.Pid)+" (explore") {
		t.Errorf("ls on the held store: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = storeCLI(dir, "ls", "--json")
	var runs []struct {
		ID, Status    string
		Interleavings int
		Live          *struct {
			PID      int
			Progress string
		}
	}
	if err := json.Unmarshal([]byte(out), &runs); err != nil || code != ExitOK || len(runs) != 1 || runs[0].ID != id ||
		runs[0].Status != "running" || runs[0].Interleavings == 0 || runs[0].Live == nil || runs[0].Live.PID != c.Process.Pid {
		t.Errorf("ls --json on the held store: exit %d %v\n%s", code, err, out)
	}
	code, out, errOut = storeCLI(dir, "show", id[:6])
	if code != ExitOK || !strings.Contains(out, "Run "+id) || !strings.Contains(out, "status  running: ") {
		t.Errorf("show on the held store: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := storeCLI(dir, "show", id, "--json"); code != ExitOK || !strings.Contains(out, `"pid": `+strconv.Itoa(c.Process.Pid)) {
		t.Errorf("show --json on the held store: exit %d\n%s", code, out)
	}
	// A run the process does not explore cannot be read until it ends.
	if code, _, errOut := storeCLI(dir, "show", "ffffffffffff"); code != ExitUsage || !strings.Contains(errOut, "not one it explores") {
		t.Errorf("show of another run: exit %d\n%s", code, errOut)
	}

	// kill -9: the run stays "running" in the store, its process gone.
	c.Process.Kill()
	c.Wait()
	code, out, errOut = storeCLI(dir, "ls")
	if code != ExitOK || !strings.Contains(out, "interrupted") || strings.Contains(out, "running") || !strings.Contains(out, "resume "+id) {
		t.Errorf("ls after the kill: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = storeCLI(dir, "show", id)
	if code != ExitOK || !strings.Contains(out, "status  interrupted: ") || strings.Contains(out, "running") {
		t.Errorf("show after the kill: exit %d\n%s%s", code, out, errOut)
	}
}
