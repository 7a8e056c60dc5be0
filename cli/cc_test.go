package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCCPebblesCompat: a program written for the original Landslide's TM
// support (P2 headers and htm.h only, assert and NULL through them)
// builds unchanged, and explore finds its failure-path bug.
func TestCCPebblesCompat(t *testing.T) {
	out := filepath.Join(t.TempDir(), "compat.elf")
	if code, _, stderr := runCLI("cc", "-o", out, "testdata/compat/pebbles_htm.c"); code != ExitOK {
		t.Fatalf("cc: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := runCLI("explore", out, "--no-store", "--quiet", "--trace-dir", t.TempDir(), "--data-race-func", "worker")
	if code != ExitBug || !strings.Contains(stdout, "failed assertion `x == before + 1'") {
		t.Errorf("explore: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestCCOverlay: cc --overlay builds against the reference library with
// its files replaced by the overlay's (here the seeded nonatomic_mutex
// bug: mutex_lock tests and sets with a plain load and store), so
// mutex_test fails where the reference build verifies; --overlay with
// another --lib is refused.
func TestCCOverlay(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		overlay []string
		want    int
	}{{nil, ExitOK}, {[]string{"--overlay", "../fixtures/src/lib/nonatomic_mutex"}, ExitBug}} {
		out := filepath.Join(dir, "mutex_test.elf")
		args := append([]string{"cc", "-o", out}, c.overlay...)
		if code, _, stderr := runCLI(append(args, "../fixtures/src/tests/mutex_test.c")...); code != ExitOK {
			t.Fatalf("cc %v: exit %d\n%s", c.overlay, code, stderr)
		}
		code, stdout, stderr := runCLI("explore", out, "--no-store", "--quiet", "--trace-dir", dir, "--data-race-func", "mutex_lock", "--max-interleavings", "20000")
		if code != c.want {
			t.Errorf("cc %v, explore: exit %d, want %d\n%s\n%s", c.overlay, code, c.want, stdout, stderr)
		}
	}
	code, _, stderr := runCLI("cc", "-o", filepath.Join(dir, "x.elf"), "--lib", "none", "--overlay", "../fixtures/src/lib/nonatomic_mutex", "../fixtures/src/tests/mutex_test.c")
	if code != ExitUsage || !strings.Contains(stderr, "--overlay") {
		t.Errorf("cc --lib none --overlay: exit %d, %q", code, stderr)
	}
}

// TestCCSaysOptLevels: cc says on stderr, in one line, that the program
// was built at -O0 and the SDK at -O1, and how to change it; --cflag -O1
// builds the program at -O1 and says so, on stderr and in --json.
func TestCCSaysOptLevels(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI("cc", "-o", filepath.Join(dir, "a.elf"), "testdata/compat/pebbles_htm.c")
	if code != ExitOK || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "program built at -O0") || !strings.Contains(stderr, "SDK at -O1") || !strings.Contains(stderr, "--cflag -O1") {
		t.Errorf("cc: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := runCLI("cc", "-o", filepath.Join(dir, "b.elf"), "testdata/compat/pebbles_htm.c", "--cflag", "-O1", "--json")
	var doc struct {
		ProgramOpt string `json:"program_opt"`
		SDKOpt     string `json:"sdk_opt"`
		Build      string `json:"build"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); code != ExitOK || err != nil {
		t.Fatalf("cc --json: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	if doc.ProgramOpt != "-O1" || doc.SDKOpt != "-O1" || !strings.Contains(stderr, doc.Build) || !strings.Contains(doc.Build, "-O0") {
		t.Errorf("cc --cflag -O1 --json: %+v; stderr %q", doc, stderr)
	}
}
