package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestShowRunInfo: show prints the command line once, as given; a
// Quicksand run's show lists every job of its table, those that never
// started or were cancelled included, with the table's status; --quiet
// keeps the line that says how to resume; and a finished Quicksand run
// whose budget is spent is not resumed as if it had budget left.
func TestShowRunInfo(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := storeCLI(dir, "quicksand", fixture(t, "ref/fig1"), "--first-bug", "-c", "1",
		"--interleaving-budget", "20000", "--quiet", "--trace-dir", t.TempDir())
	if code != ExitBug || !strings.Contains(errOut, "landslide --store "+dir+" resume ") {
		t.Fatalf("quicksand --quiet: exit %d, stderr %q (the run line must stay)", code, errOut)
	}
	_, ls, _ := storeCLI(dir, "ls", "--json")
	var runs []struct{ ID string }
	if err := json.Unmarshal([]byte(ls), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("ls: %v\n%s", err, ls)
	}
	id := runs[0].ID
	_, show, _ := storeCLI(dir, "show", id)
	if n := strings.Count(show, "quicksand"); strings.Count(show, "--first-bug") != 1 || n < 2 {
		t.Errorf("show prints the command %d times:\n%s", strings.Count(show, "--first-bug"), show)
	}
	if !strings.Contains(show, "command landslide --store "+dir+" quicksand ") {
		t.Errorf("show lacks the command line as given:\n%s", show)
	}
	_, doc, _ := storeCLI(dir, "show", id, "--json")
	var d struct {
		Jobs []struct {
			ID     int    `json:"id"`
			Status string `json:"status"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	// The uninterrupted run's own --json lists the job table.
	_, qs, _ := runCLI("quicksand", fixture(t, "ref/fig1"), "--no-store", "--first-bug", "-c", "1",
		"--interleaving-budget", "20000", "--quiet", "--json", "--trace-dir", t.TempDir())
	var want qsDoc
	if err := json.Unmarshal([]byte(qs), &want); err != nil {
		t.Fatal(err)
	}
	if len(d.Jobs) != len(want.Jobs) {
		t.Fatalf("show lists %d jobs, the run had %d", len(d.Jobs), len(want.Jobs))
	}
	notStarted := 0
	for i, j := range d.Jobs {
		if j.ID != i+1 || j.Status != want.Jobs[i].Status {
			t.Errorf("show's job %d: %q, the run's: %q", j.ID, j.Status, want.Jobs[i].Status)
		}
		if j.Status == "not started" {
			notStarted++
		}
		if j.Status == "timed out" {
			t.Errorf("job %d timed out in a run the first bug ended with budget left", j.ID)
		}
	}
	if notStarted == 0 {
		t.Error("no job is listed as not started")
	}
	if !strings.Contains(show, "not started (first bug found)") {
		t.Errorf("show does not say why the jobs never ran:\n%s", show)
	}

	// A budget-spent run is not resumed with nothing left to spend.
	dir2 := t.TempDir()
	code, _, _ = storeCLI(dir2, "quicksand", fixture(t, "ref/fig1"), "-c", "1", "--interleaving-budget", "500",
		"--quiet", "--trace-dir", t.TempDir())
	if code != ExitBudget {
		t.Fatalf("a 500-interleaving quicksand run: exit %d", code)
	}
	_, ls, _ = storeCLI(dir2, "ls", "--json")
	if err := json.Unmarshal([]byte(ls), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("ls: %v\n%s", err, ls)
	}
	code, out, errOut := storeCLI(dir2, "resume", runs[0].ID)
	if code != ExitUsage || !strings.Contains(errOut, "already spent its budget") {
		t.Errorf("resume of a spent run: exit %d\n%s%s", code, out, errOut)
	}
}
