package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckerLimitCLI: a program that creates more threads than
// --max-threads reaches a limit of the checker, never a bug, in every
// command: run, explore (text and --json), quicksand (--json), and the
// store (ls and show say "limit", bugs lists none, resume refuses);
// each exits 3 and names the limit and the flag that raises it. The
// same program within the limit is verified.
func TestCheckerLimitCLI(t *testing.T) {
	prog := fixture(t, "posix/many_threads")
	const msg = "thread limit: creating a thread would exceed 4 live threads (--max-threads raises it)"
	dir := t.TempDir()
	traces := t.TempDir()

	code, _, stderr := runCLI("run", prog, "--max-threads", "4", "--", "5")
	if code != ExitBudget || !strings.Contains(stderr, "Limit reached (not a bug): "+msg) ||
		!strings.Contains(stderr, "Replay: landslide run "+prog+" --max-threads 4 --schedule ") || strings.Contains(stderr, "A bug was found") {
		t.Errorf("run: exit %d\n%s", code, stderr)
	}
	code, out, stderr := runCLI("run", prog, "--max-threads", "4", "--json", "--", "5")
	var rd RunJSON
	if err := json.Unmarshal([]byte(out), &rd); err != nil {
		t.Fatalf("run --json: %v\n%s\n%s", err, out, stderr)
	}
	if code != ExitBudget || rd.Result != "limit" || rd.ExitCode != ExitBudget || len(rd.Bugs) != 0 || rd.Limit == nil || rd.Limit.Message != msg {
		t.Errorf("run --json: exit %d, %+v", code, rd)
	}

	code, out, stderr = runCLI("--store", dir, "explore", prog, "--max-threads", "4", "--quiet", "--trace-dir", traces, "--", "5")
	if code != ExitBudget || !strings.Contains(out, "Not verified: interleaving 1 went past a limit of the checker") ||
		!strings.Contains(out, "Limit reached (not a bug): "+msg) || strings.Contains(out, "A bug was found") {
		t.Errorf("explore: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = runCLI("--store", dir, "explore", prog, "--max-threads", "4", "--quiet", "--json", "--trace-dir", traces, "--", "5")
	var ed ExploreJSON
	if err := json.Unmarshal([]byte(out), &ed); err != nil {
		t.Fatalf("explore --json: %v\n%s\n%s", err, out, stderr)
	}
	if code != ExitBudget || ed.Result != "limit" || ed.Stopped != "checker limit" || len(ed.Bugs) != 0 || ed.Verified || ed.Limit == nil ||
		ed.Limit.Message != msg || !strings.Contains(ed.Limit.Replay, "--max-threads 4 --schedule ") || ed.Run == "" {
		t.Errorf("explore --json: exit %d, %+v", code, ed)
	}

	// The store: the run's status is limit, with the message; no bug.
	code, out, _ = runCLI("--store", dir, "ls")
	if code != ExitOK || strings.Count(out, " limit ") != 2 || !strings.Contains(out, msg) {
		t.Errorf("ls: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("--store", dir, "show", ed.Run)
	if code != ExitOK || !strings.Contains(out, "status  limit: "+msg) || !strings.Contains(out, "Job 1 {pthread calls}: limit,") || strings.Contains(out, "Bug (") {
		t.Errorf("show: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("--store", dir, "bugs")
	if code != ExitOK || !strings.Contains(out, "No bugs.") {
		t.Errorf("bugs: exit %d\n%s", code, out)
	}
	code, _, stderr = runCLI("--store", dir, "resume", ed.Run, "--quiet")
	if code != ExitUsage || !strings.Contains(stderr, "stopped at a limit of the checker: "+msg) {
		t.Errorf("resume: exit %d\n%s", code, stderr)
	}

	// Quicksand: the jobs end at the limit, none is a bug, exit 3.
	code, d, stderr := runQuicksandCLI(t, fixture(t, "bugs/thread_limit"), "--no-store", "--max-threads", "4", "--interleaving-budget", "1000")
	if code != ExitBudget || d.Result != "limit" || len(d.Bugs) != 0 || d.TotalVerification || len(d.Jobs) == 0 {
		t.Fatalf("quicksand: exit %d, %+v\n%s", code, d, stderr)
	}
	for _, j := range d.Jobs {
		if j.Status != "limit" || j.Limit != msg {
			t.Errorf("quicksand job %d: %s %q", j.ID, j.Status, j.Limit)
		}
	}

	// The memory limit: the pthread stacks of 5 threads (256 KiB each)
	// do not fit in 1 MiB. The replay line repeats the flag, and
	// replays the limit.
	code, _, stderr = runCLI("run", prog, "--max-memory", "1M", "--", "5")
	const mem = "memory limit: a thread's stack (256 KiB) would exceed 1 MiB of guest memory (--max-memory raises it)"
	i := strings.Index(stderr, "Replay: landslide run ")
	if code != ExitBudget || !strings.Contains(stderr, "Limit reached (not a bug): "+mem) || i < 0 {
		t.Fatalf("run --max-memory 1M: exit %d\n%s", code, stderr)
	}
	replay := strings.Fields(strings.TrimSpace(strings.SplitN(stderr[i+len("Replay: landslide "):], "\n", 2)[0]))
	if !strings.Contains(strings.Join(replay, " "), "--max-memory 1MiB --schedule ") {
		t.Errorf("replay %q", replay)
	}
	if code, _, stderr = runCLI(replay...); code != ExitBudget || !strings.Contains(stderr, mem) {
		t.Errorf("the replay line: exit %d\n%s", code, stderr)
	}
	if code, _, stderr = runCLI("run", prog, "--max-memory", "1X", "--", "5"); code != ExitUsage || !strings.Contains(stderr, "not a size") {
		t.Errorf("--max-memory 1X: exit %d\n%s", code, stderr)
	}

	// Within the limit the same program is verified.
	code, out, stderr = runCLI("--store", dir, "explore", prog, "--max-threads", "4", "--quiet", "--trace-dir", traces, "--", "3")
	if code != ExitOK || !strings.Contains(out, "Verified") {
		t.Errorf("3 threads under --max-threads 4: exit %d\n%s\n%s", code, out, stderr)
	}
}
