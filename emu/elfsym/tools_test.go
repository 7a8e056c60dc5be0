package elfsym

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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

// buildC compiles testdata/<src> (extra may add sources and flags) and
// returns the ELF's path. Builds are shared by the tests of one run.
func buildC(t testing.TB, src string, extra ...string) string {
	t.Helper()
	needTools(t, "clang", "ld.lld")
	args := append(append([]string{}, guestCFlags...), extra...)
	args = append(args, src)
	key := strings.Join(args, " ")
	buildMu.Lock()
	defer buildMu.Unlock()
	if out, ok := builds[key]; ok {
		return out
	}
	dir, err := os.MkdirTemp(buildDir, "build")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c")+".elf")
	cmd := exec.Command("clang", append(args, "-o", out)...)
	cmd.Dir = "testdata" // so DWARF names files relative to testdata
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clang %s: %v\n%s", key, err, b)
	}
	builds[key] = out
	return out
}

var (
	buildMu  sync.Mutex
	builds   = map[string]string{}
	buildDir string
)

func TestMain(m *testing.M) {
	var err error
	if buildDir, err = os.MkdirTemp("", "elfsym-test"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(buildDir)
	os.Exit(code)
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
