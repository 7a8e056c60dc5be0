package elfsym

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The flags every guest binary is built with.
var guestCFlags = []string{
	"--target=riscv64-unknown-elf", "-march=rv64ima", "-mabi=lp64",
	"-g", "-O1", "-fno-omit-frame-pointer", "-ffreestanding", "-nostdlib",
	"-fuse-ld=lld", "-Wl,--build-id=none", "-fdebug-compilation-dir=.",
}

// needTools fails the test when a tool is missing, unless
// LANDSLIDE_NO_CLANG=1 says to skip tests that need clang and LLVM.
func needTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("LANDSLIDE_NO_CLANG") == "1" {
				t.Skipf("%s not found and LANDSLIDE_NO_CLANG=1", tool)
			}
			t.Fatalf("%s not found: this test builds RISC-V guest code and checks it against LLVM's tools; "+
				"install them (apt-get install clang lld llvm) or set LANDSLIDE_NO_CLANG=1 to skip", tool)
		}
	}
}

// buildC compiles testdata/<src> into a fresh directory and returns the
// ELF's path. The compiler runs in testdata so DWARF names the file by its
// base name.
func buildC(t testing.TB, src string, extra ...string) string {
	t.Helper()
	needTools(t, "clang", "ld.lld")
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(src, ".c")+".elf")
	args := append(append([]string{}, guestCFlags...), extra...)
	args = append(args, src, "-o", out)
	cmd := exec.Command("clang", args...)
	cmd.Dir = "testdata"
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// run runs a tool and returns its standard output.
func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	needTools(t, name)
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
