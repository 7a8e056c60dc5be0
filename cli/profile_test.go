package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProfileFlags: --cpuprofile and --memprofile write pprof files
// (gzipped protocol buffers) whatever the command's exit code, and a
// profile that cannot be written is one line and exit 2.
func TestProfileFlags(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	prog := fixture(t, "sem_if/paradise_lost")
	code, _, errOut := runCLI("explore", prog, "--no-store", "--quiet", "--no-minimize", "--preemption-bound", "1", "--trace-dir", dir,
		"--cpuprofile", cpu, "--memprofile", mem)
	if code != ExitBug {
		t.Fatalf("exit %d, want 1 (the bug)\n%s", code, errOut)
	}
	for _, f := range []string{cpu, mem} {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Errorf("%s: %d bytes, %v: want a gzipped profile", filepath.Base(f), len(b), err)
		}
	}
	code, _, errOut = runCLI("run", prog, "--memprofile", filepath.Join(dir, "no", "such", "dir", "m"))
	if code != ExitUsage || !bytes.Contains([]byte(errOut), []byte("landslide: --memprofile: ")) {
		t.Errorf("an unwritable --memprofile: exit %d, stderr %q", code, errOut)
	}
}
