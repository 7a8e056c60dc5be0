package isatest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"landslide/fixtures"
)

// qemuCPU makes qemu implement RV64IMA as our emulator does: F and D off
// (floating point is illegal), C off (jump targets must be 4-byte aligned).
const qemuCPU = "rv64,f=off,d=off,c=off"

// qemuTimeout bounds one qemu run; every program takes well under a second.
const qemuTimeout = 60 * time.Second

// isaFixtures returns the "isa/..." fixtures in catalog order.
func isaFixtures(t testing.TB) []fixtures.Fixture {
	t.Helper()
	var fs []fixtures.Fixture
	for _, f := range fixtures.All() {
		if strings.HasPrefix(f.Name, "isa/") {
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		t.Fatal("no isa/ fixtures in the catalog (fixtures/isa.go)")
	}
	return fs
}

// isTrap reports whether the fixture must end in a fault.
func isTrap(f fixtures.Fixture) bool { return f.Expect != "ok" }

// readELF reads a fixture's binary, failing with a hint when it is missing.
func readELF(t testing.TB, f fixtures.Fixture) []byte {
	t.Helper()
	b, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatalf("%s: %v (rebuild the fixtures with: go run ./fixtures/cmd/build)", f.Name, err)
	}
	return b
}

// qemuBinary returns the path of qemu-riscv64, or "" when the reference
// runs are disabled with LANDSLIDE_NO_QEMU=1. A missing qemu is a failure.
func qemuBinary(t testing.TB) string {
	t.Helper()
	if os.Getenv("LANDSLIDE_NO_QEMU") == "1" {
		return ""
	}
	p, err := exec.LookPath("qemu-riscv64")
	if err != nil {
		t.Fatalf("qemu-riscv64 not found: the differential ISA tests need QEMU's user-mode emulator; "+
			"install qemu-user (Debian/Ubuntu: apt-get install qemu-user) or set LANDSLIDE_NO_QEMU=1 to skip the reference runs (%v)", err)
	}
	return p
}

// qemuResult is what one run under qemu-riscv64 produced.
type qemuResult struct {
	stdout []byte
	stderr []byte
	exit   int            // exit status when the process exited
	signal syscall.Signal // non-zero when the process was killed by a signal
}

func (r *qemuResult) describe() string {
	if r.signal != 0 {
		return fmt.Sprintf("killed by signal %d (%v)", int(r.signal), r.signal)
	}
	return fmt.Sprintf("exit status %d", r.exit)
}

// unhandledException reports whether qemu gave up on a CPU exception that
// linux-user does not turn into a signal (a misaligned instruction address
// when C is off); it then exits with status 1.
func (r *qemuResult) unhandledException() bool {
	return r.signal == 0 && r.exit != 0 && bytes.Contains(r.stderr, []byte("unhandled CPU exception"))
}

// runQEMU runs an ELF under qemu-riscv64. The working directory is a fresh
// temporary one so a core dump of a trapping guest cannot litter the tree.
func runQEMU(t testing.TB, qemu, elf string) *qemuResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), qemuTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, "-cpu", qemuCPU, elf)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("qemu-riscv64 %s: timed out after %v", elf, qemuTimeout)
	}
	r := &qemuResult{stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		ws, ok := ee.Sys().(syscall.WaitStatus)
		switch {
		case ok && ws.Signaled():
			r.signal = ws.Signal()
		case ok:
			r.exit = ws.ExitStatus()
		default:
			r.exit = ee.ExitCode()
		}
	default:
		t.Fatalf("qemu-riscv64 %s: %v", elf, err)
	}
	return r
}

// trapSignals lists how qemu may die for each expected bug kind.
var trapSignals = map[string][]syscall.Signal{
	"illegal_instruction": {syscall.SIGILL},
	"memory":              {syscall.SIGSEGV, syscall.SIGBUS},
	"misaligned":          {syscall.SIGBUS, syscall.SIGSEGV},
}

// checkQEMUTrap requires that qemu died the way the fixture's kind implies.
func checkQEMUTrap(t *testing.T, f fixtures.Fixture, q *qemuResult) {
	t.Helper()
	if bytes.Contains(q.stdout, []byte("NOT TRAPPED")) {
		t.Fatalf("qemu: %s did not trap (%s); stdout:\n%s", f.Name, q.describe(), q.stdout)
	}
	if f.Expect == "misaligned" && q.unhandledException() {
		return // a misaligned jump target with C off
	}
	for _, s := range trapSignals[f.Expect] {
		if q.signal == s {
			return
		}
	}
	t.Fatalf("qemu: %s should die with a signal matching %q but %s; stderr:\n%s", f.Name, f.Expect, q.describe(), q.stderr)
}

// checkQEMUOK requires a clean exit with every self-check passed.
func checkQEMUOK(t *testing.T, f fixtures.Fixture, q *qemuResult) {
	t.Helper()
	if q.signal != 0 || q.exit != 0 {
		t.Fatalf("qemu: %s %s (want exit status 0: the program's self-checks failed or it crashed)\n%s\nstderr:\n%s",
			f.Name, q.describe(), failLines(q.stdout), q.stderr)
	}
	if !bytes.HasSuffix(q.stdout, []byte("done failures 0\n")) {
		t.Fatalf("qemu: %s output does not end with \"done failures 0\"", f.Name)
	}
}

// failLines extracts the self-check failures from a program's output.
func failLines(out []byte) string {
	var b strings.Builder
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "FAIL") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// diffOutput returns "" when want and got are equal, otherwise a report of
// the first differing line.
func diffOutput(wantName string, want []byte, gotName string, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	wl := strings.SplitAfter(string(want), "\n")
	gl := strings.SplitAfter(string(got), "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	line := func(ls []string) string {
		if i >= len(ls) || ls[i] == "" {
			return "(end of output)"
		}
		return fmt.Sprintf("%q", ls[i])
	}
	ctx := ""
	if i > 0 {
		ctx = fmt.Sprintf("\n  previous line: %q", wl[i-1])
	}
	return fmt.Sprintf("stdout differs at line %d (of %d %s lines, %d %s lines):\n  %-5s %s\n  %-5s %s%s",
		i+1, len(wl), wantName, len(gl), gotName, wantName+":", line(wl), gotName+":", line(gl), ctx)
}

func TestISAAgainstQEMU(t *testing.T) {
	qemu := qemuBinary(t)
	if qemu == "" {
		t.Log("LANDSLIDE_NO_QEMU=1: no reference runs; checking the emulator against the programs' self-checks only")
	}
	for _, f := range isaFixtures(t) {
		t.Run(strings.TrimPrefix(f.Name, "isa/"), func(t *testing.T) {
			image := readELF(t, f)

			var q *qemuResult
			if qemu != "" {
				q = runQEMU(t, qemu, f.Path())
				if isTrap(f) {
					checkQEMUTrap(t, f, q)
				} else {
					checkQEMUOK(t, f, q)
				}
			}

			start := time.Now()
			e, err := runEmulator(image)
			if err != nil {
				t.Fatalf("emulator: %s: %v", f.Name, err)
			}
			t.Logf("emulator: %d instructions in %v", e.instrs, time.Since(start).Round(time.Millisecond))

			if isTrap(f) {
				if e.bug == "" {
					t.Errorf("emulator: %s ended without a bug (exit status %d, budget spent %v); want a %q bug",
						f.Name, e.exit, e.budget, f.Expect)
				} else if e.bug != f.Expect {
					t.Errorf("emulator: %s: got a %q bug, want %q: %s", f.Name, e.bug, f.Expect, e.report)
				}
			} else {
				if e.bug != "" {
					t.Errorf("emulator: %s hit a bug: %s", f.Name, e.report)
				}
				if e.budget {
					t.Errorf("emulator: %s ran out of its instruction budget", f.Name)
				}
			}

			if q == nil {
				// No reference: rely on the programs' own checks.
				if !isTrap(f) {
					if fl := failLines(e.stdout); fl != "" || e.exit != 0 {
						t.Errorf("emulator: %s exit status %d, self-check failures:\n%s", f.Name, e.exit, fl)
					}
					if !bytes.HasSuffix(e.stdout, []byte("done failures 0\n")) {
						t.Errorf("emulator: %s output does not end with \"done failures 0\"", f.Name)
					}
				}
				return
			}

			if d := diffOutput("qemu", q.stdout, "ours", e.stdout); d != "" {
				t.Errorf("%s: %s", f.Name, d)
				if fl := failLines(e.stdout); fl != "" {
					t.Errorf("%s: our emulator failed self-checks:\n%s", f.Name, fl)
				}
			}
			if !isTrap(f) && e.bug == "" && e.exit != q.exit {
				t.Errorf("%s: exit status: qemu %d, ours %d", f.Name, q.exit, e.exit)
			}
		})
	}
}

// TestISAFixturesComplete checks the catalog against the tree: every ISA
// source is some fixture's, every fixture's sources and binary exist, trap
// fixtures name a known bug kind, and the binaries are ELF files.
func TestISAFixturesComplete(t *testing.T) {
	root := fixtures.Root()
	used := map[string]bool{}
	for _, f := range isaFixtures(t) {
		if !f.NoLibc {
			t.Errorf("%s: ISA fixtures are freestanding (NoLibc)", f.Name)
		}
		if isTrap(f) {
			if _, ok := trapSignals[f.Expect]; !ok {
				t.Errorf("%s: Expect %q is not a trap kind this suite knows", f.Name, f.Expect)
			}
			if !strings.HasPrefix(f.Name, "isa/trap_") {
				t.Errorf("%s: trap fixtures are named isa/trap_*", f.Name)
			}
		}
		for _, s := range f.Sources {
			used[filepath.ToSlash(s)] = true
			if _, err := os.Stat(filepath.Join(root, s)); err != nil {
				t.Errorf("%s: source: %v", f.Name, err)
			}
		}
		b, err := os.ReadFile(f.Path())
		if err != nil {
			t.Errorf("%s: %v (rebuild with: go run ./fixtures/cmd/build)", f.Name, err)
			continue
		}
		if !bytes.HasPrefix(b, []byte("\x7fELF")) {
			t.Errorf("%s: %s is not an ELF file", f.Name, f.Output)
		}
	}
	srcs, err := filepath.Glob(filepath.Join(root, "fixtures", "src", "isa", "*.c"))
	if err != nil {
		t.Fatal(err)
	}
	var orphans []string
	for _, s := range srcs {
		rel, _ := filepath.Rel(root, s)
		if !used[filepath.ToSlash(rel)] {
			orphans = append(orphans, rel)
		}
	}
	sort.Strings(orphans)
	if len(orphans) > 0 {
		t.Errorf("ISA sources not built by any fixture: %v", orphans)
	}
}
