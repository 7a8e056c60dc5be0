package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProgramFileNotRegular: a program path that names a character
// device, a FIFO, a directory or a sparse 3 GiB file gets one line and
// exit 2 at once, from every command that reads a program; before, the
// whole file was read (a FIFO with no writer and /dev/zero never ended,
// the sparse file took 3 GiB).
func TestProgramFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.elf")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "not a regular file (a character device)"},
		{fifo, "not a regular file (a FIFO)"},
		{dir, "a directory, not a program"},
		{sparse, "3221225472 bytes, larger than 256 MiB"},
	} {
		for _, cmd := range []string{"run", "explore", "quicksand"} {
			done := make(chan struct{})
			var code int
			var stdout, stderr string
			go func() {
				defer close(done)
				args := []string{cmd, c.path}
				if cmd != "run" {
					args = append(args, "--no-store", "--quiet")
				}
				code, stdout, stderr = runCLI(args...)
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatalf("%s %s: still reading after a minute", cmd, c.path)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(stderr, c.want) || stdout != "" {
				t.Errorf("%s %s: exit %d, stderr %q, stdout %q; want exit 2 and one line saying %q", cmd, c.path, code, stderr, stdout, c.want)
			}
		}
	}
}
