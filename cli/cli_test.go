package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"landslide/emu/mem"
	"landslide/fixtures"
	"landslide/internal/gctune"
)

// TestMain lets the test binary act as the landslide command, so tests can
// run it as a separate process.
func TestMain(m *testing.M) {
	if os.Getenv("LANDSLIDE_TEST_AS_MAIN") == "1" {
		if n, err := strconv.ParseInt(os.Getenv("LANDSLIDE_TEST_FULL_AFTER"), 10, 64); err == nil {
			// The disk fills up after n syncs (TestStoreFailures), or is
			// full from the start (n = 0).
			armed := &atomic.Bool{}
			armed.Store(n == 0)
			storeFS = failingFS{FS: vfs.Default, errno: syscall.ENOSPC, armed: armed, syncs: &atomic.Int64{}, armAfter: n, dirsOK: true}
		}
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	gctune.Tune() // the in-process commands' collector, as Main sets it
	// Memory a search released is poisoned before reuse: a state that
	// still reached it would fail the tests.
	mem.PoisonReleased = true
	// Explorations record themselves in the store: keep the tests' out
	// of the source tree.
	dir, err := os.MkdirTemp("", "landslide-cli-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("LANDSLIDE_STORE", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return code, o.String(), e.String()
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	f, ok := fixtures.Lookup(name)
	if !ok {
		t.Fatalf("fixture %s missing", name)
	}
	return f.Path()
}

// TestMalformedInput: truncated, wrong-architecture and garbage files give
// exit code 2 and a one-line reason.
func TestMalformedInput(t *testing.T) {
	good, err := os.ReadFile(fixture(t, "isa/rv64i"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wrongArch := append([]byte(nil), good...)
	wrongArch[18], wrongArch[19] = 62, 0 // e_machine = EM_X86_64
	cases := map[string][]byte{
		"truncated": good[:len(good)/3],
		"header":    good[:20],
		"wrongarch": wrongArch,
		"garbage":   bytes.Repeat([]byte("landslide"), 100),
		"empty":     nil,
	}
	for name, data := range cases {
		p := filepath.Join(dir, name+".elf")
		os.WriteFile(p, data, 0o644)
		code, out, errOut := runCLI("run", p)
		if code != ExitUsage {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", name, code, errOut)
		}
		if out != "" || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || !strings.HasPrefix(errOut, "landslide: ") {
			t.Errorf("%s: want one line on stderr and nothing on stdout, got stdout %q stderr %q", name, out, errOut)
		}
	}
	if code, _, _ := runCLI("run", filepath.Join(dir, "missing.elf")); code != ExitUsage {
		t.Errorf("missing file: exit %d", code)
	}
	if code, _, _ := runCLI("run", "--bogus-flag", "x"); code != ExitUsage {
		t.Errorf("unknown flag: exit %d", code)
	}
	if code, _, e := runCLI("run", fixture(t, "isa/rv64i"), "--schedule", "1,x"); code != ExitUsage {
		t.Errorf("bad schedule: exit %d %s", code, e)
	}
	if code, _, e := runCLI("run", fixture(t, "isa/rv64i"), "--schedule", "1", "--seed", "3"); code != ExitUsage {
		t.Errorf("--schedule with --seed: exit %d %s", code, e)
	}
}

// summary is run's --json document (one schema: schema.go).
type summary = RunJSON

// TestDeterminismAcrossProcesses runs the command in separate processes
// and compares the summaries, trace hash included.
func TestDeterminismAcrossProcesses(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prog := fixture(t, "ref/paradise_lost")
	var first *summary
	for i := 0; i < 3; i++ {
		cmd := exec.Command(self, "run", prog, "--seed", "11", "--json")
		cmd.Env = append(os.Environ(), "LANDSLIDE_TEST_AS_MAIN=1")
		out, _ := cmd.Output()
		var s summary
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("run %d: %v: %s", i, err, out)
		}
		if s.TraceHash == "" || s.Instructions == 0 {
			t.Fatalf("run %d: empty summary %+v", i, s)
		}
		if first == nil {
			first = &s
			continue
		}
		if s.TraceHash != first.TraceHash || s.Instructions != first.Instructions || s.Stdout != first.Stdout || s.Schedule != first.Schedule {
			t.Fatalf("process %d differs: %+v vs %+v", i, s, *first)
		}
	}
}
