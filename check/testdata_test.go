package check

import (
	"os"
	"path/filepath"
	"testing"

	"landslide/sdk"
)

// buildTestdata builds testdata/NAME.c, a POSIX program written for a
// test, with the program's sources at opt ("" for the SDK's), and returns
// the ELF's path and bytes. Without clang the test fails, unless
// LANDSLIDE_NO_CLANG=1 says that is expected.
func buildTestdata(t *testing.T, name, opt string) (string, []byte) {
	t.Helper()
	if !sdk.HaveClang() {
		if os.Getenv("LANDSLIDE_NO_CLANG") == "1" {
			t.Skip("clang/ld.lld not installed and LANDSLIDE_NO_CLANG=1")
		}
		t.Fatal("this test needs clang and ld.lld (apt-get install clang lld); set LANDSLIDE_NO_CLANG=1 to skip it")
	}
	elf := filepath.Join(t.TempDir(), name+".elf")
	if err := sdk.Build(sdk.Options{Sources: []string{"testdata/" + name + ".c"}, Output: elf, Posix: true, ProgramOpt: opt}); err != nil {
		t.Fatal(err)
	}
	image, err := os.ReadFile(elf)
	if err != nil {
		t.Fatal(err)
	}
	return elf, image
}
