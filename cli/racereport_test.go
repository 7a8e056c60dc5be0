package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportsCarryRaces: the .txt, .html and .json bug reports carry the
// data-race candidates stdout printed, with both stacks (the .txt the
// same block as stdout); the HTML shows source lines around the frames;
// and landslide races prints every frame of both stacks.
func TestReportsCarryRaces(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut, traces := explore(t, fixture(t, "ref/fig1"), "--store", dir, "--quiet",
		"--data-race-func", "thread1", "--data-race-func", "thread2", "--preemption-bound", "2")
	if code != ExitBug {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	i := strings.Index(out, "Data-race candidates (")
	if i < 0 {
		t.Fatalf("stdout lists no race candidates:\n%s", out)
	}
	block := out[i:]
	if j := strings.Index(block, "\n\n"); j >= 0 { // then the replay line
		block = block[:j+1]
	}
	if strings.Count(out, "Data-race candidates (") != 1 {
		t.Errorf("stdout lists the candidates %d times", strings.Count(out, "Data-race candidates ("))
	}
	if strings.Count(block, "\n") < 4 {
		t.Fatalf("a short race block:\n%s", block)
	}
	txt, err := os.ReadFile(filepath.Join(traces, "landslide-bug-fig1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(txt), block) {
		t.Errorf("the .txt report lacks stdout's race block:\n%s\n--- report:\n%s", block, txt)
	}
	var doc struct {
		Races []struct {
			A, B struct {
				Stack []struct {
					Text string `json:"text"`
				} `json:"stack"`
			}
		} `json:"races"`
	}
	data, err := os.ReadFile(filepath.Join(traces, "landslide-bug-fig1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Races) == 0 {
		t.Fatalf("the .json report has no races: %v", err)
	}
	for _, r := range doc.Races {
		if len(r.A.Stack) < 2 || len(r.B.Stack) < 2 {
			t.Errorf("a race without both stacks in the .json report: %+v", r)
		}
	}
	html, err := os.ReadFile(filepath.Join(traces, "landslide-bug-fig1.html"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../fixtures/src/tests/fig1.c")
	if err != nil {
		t.Fatal(err)
	}
	// The report is written from the repository's root in use (cwd is
	// cli/ in tests, where the DWARF paths do not resolve): no source, and
	// no error. From the root, the source lines are there.
	if !strings.Contains(string(html), `<section id="races">`) {
		t.Error("the .html report has no race section")
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(".."); err != nil {
		t.Fatal(err)
	}
	code, _, _, traces2 := explore(t, fixture(t, "ref/fig1"), "--store", t.TempDir(), "--quiet",
		"--data-race-func", "thread1", "--data-race-func", "thread2", "--preemption-bound", "2")
	os.Chdir(wd)
	html, err = os.ReadFile(filepath.Join(traces2, "landslide-bug-fig1.html"))
	if code != ExitBug || err != nil {
		t.Fatalf("from the root: exit %d, %v", code, err)
	}
	line45 := strings.TrimSpace(strings.Split(string(src), "\n")[44])
	if !strings.Contains(string(html), `<pre class="src">`) || !strings.Contains(string(html), htmlEscape(line45)) {
		t.Errorf("the .html report shows no source around fig1.c:45 (%q)", line45)
	}

	// races: every frame of both stacks.
	_, ls, _ := storeCLI(dir, "ls", "--json")
	var runs []struct{ ID string }
	if err := json.Unmarshal([]byte(ls), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("ls: %v", err)
	}
	_, races, _ := storeCLI(dir, "races", runs[0].ID)
	if !strings.Contains(races, "      A: ") || !strings.Contains(races, "\n         0x") {
		t.Errorf("races prints only the top frames:\n%s", races)
	}
	_, races, _ = storeCLI(dir, "races", runs[0].ID, "--json")
	var rdoc struct {
		Races []struct {
			StackA []any `json:"stack_a"`
			StackB []any `json:"stack_b"`
		} `json:"races"`
	}
	if err := json.Unmarshal([]byte(races), &rdoc); err != nil || len(rdoc.Races) == 0 {
		t.Fatalf("races --json: %v\n%s", err, races)
	}
	for _, r := range rdoc.Races {
		if len(r.StackA) < 2 || len(r.StackB) < 2 {
			t.Errorf("races --json without both stacks: %+v", r)
		}
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}
