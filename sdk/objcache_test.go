package sdk

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestObjectCacheFollowsHeaders: a build reuses the SDK's cached objects,
// and a change to a header one of them includes from another directory
// of the SDK ("../lib/ls_syscall.h" from sdk/posix) compiles them again:
// the program built after the change is the one a cold build makes.
func TestObjectCacheFollowsHeaders(t *testing.T) {
	if !HaveClang() {
		t.Fatal("this test needs clang and ld.lld (apt-get install clang lld)")
	}
	root := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache")) // a cache of its own (os.UserCacheDir)
	// A copy of the SDK to change, with a POSIX program.
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(root, "sdk"), os.DirFS(filepath.Join(repo, "sdk"))); err != nil {
		t.Fatal(err)
	}
	// It reads as a checkout (sdk.inRepo), so that this copy is built,
	// not the SDK embedded in the binary.
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module landslide\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(root, "p.c")
	if err := os.WriteFile(prog, []byte("#include <pthread.h>\n#include <stdio.h>\nint main(void) { printf(\"hi\\n\"); return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(name string) []byte {
		t.Helper()
		out := filepath.Join(root, name)
		if err := Build(Options{Dir: root, Sources: []string{"p.c"}, Output: out, Posix: true}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := build("a.elf")
	if b := build("b.elf"); !bytes.Equal(a, b) {
		t.Fatal("a build from the cache differs from the cold one")
	}
	entries, _ := os.ReadDir(filepath.Join(root, "cache", "landslide", "obj"))
	if len(entries) == 0 {
		t.Fatal("nothing cached")
	}
	// A new constant in a header of sdk/lib that sdk/posix includes.
	h := filepath.Join(root, "sdk", "lib", "ls_syscall.h")
	src, err := os.ReadFile(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h, append(src, []byte("\nstatic const char ls_cache_probe[] __attribute__((used)) = \"probe\";\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	c := build("c.elf")
	if bytes.Equal(a, c) || !bytes.Contains(c, []byte("ls_cache_probe")) {
		t.Fatal("the build after a header change reused the objects of before it")
	}
	os.RemoveAll(filepath.Join(root, "cache"))
	if d := build("d.elf"); !bytes.Equal(c, d) {
		t.Fatal("the build after the header change differs from a cold build")
	}
}
