package sdk

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCxxHeaders: every C header of the SDK has its C++ twin in
// include/c++ (the same header with C linkage: a new C header without
// one would link its functions under C++ names), and every C++ library
// header CxxHeaders lists exists.
func TestCxxHeaders(t *testing.T) {
	ents, err := fs.ReadDir(files, "include")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".h") {
			continue
		}
		n++
		b, err := fs.ReadFile(files, "include/c++/"+e.Name())
		if err != nil {
			t.Errorf("%s has no C++ twin in include/c++", e.Name())
			continue
		}
		if e.Name() != "stdatomic.h" && !strings.Contains(string(b), "#include_next <"+e.Name()+">") {
			t.Errorf("include/c++/%s does not include the C header", e.Name())
		}
	}
	if n < 30 {
		t.Fatalf("only %d C headers found", n)
	}
	for _, h := range CxxHeaders {
		if _, err := fs.Stat(files, "include/c++/"+strings.Trim(h, "<>")); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
}

// TestCxxBuildErrors: what the guest's C++ does not have fails to build
// with a message that names it: a header outside the library (the
// message lists the library's), exceptions, RTTI; and a C++ program
// builds outside the repository too (the embedded SDK), its main run
// after its global constructors.
func TestCxxBuildErrors(t *testing.T) {
	needClang(t)
	isolateCache(t)
	dir := t.TempDir()
	for _, c := range []struct{ name, src, want string }{
		{"header", "#include <vector>\nint main() { return 0; }\n", "'vector' file not found"},
		{"header list", "#include <vector>\nint main() { return 0; }\n", "<condition_variable>"},
		{"exceptions", "int main() { throw 1; }\n", "exceptions disabled"},
		{"rtti", "struct A { virtual ~A() {} };\nint main() { A a; return typeid(a).name()[0]; }\n", "typeid"},
		{"stdatomic", "#include <stdatomic.h>\nint main() { return 0; }\n", "in C++ include <atomic>"},
	} {
		src := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".cc")
		if err := os.WriteFile(src, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		err := Build(Options{Sources: []string{src}, Output: src + ".elf", Dir: dir})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
	src := filepath.Join(dir, "ok.cc")
	if err := os.WriteFile(src, []byte("#include <atomic>\nstd::atomic<int> x{1};\nint main() { return x.load() - 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(Options{Sources: []string{src}, Output: src + ".elf", Dir: dir}); err != nil {
		t.Fatal(err)
	}
}

// TestCxxStandardFlag: a --cflag -std= applies to the sources of its
// language only: -std=c++20 builds a program of C and C++ sources (the
// SDK's C among them) with C++20 (std::memory_order::seq_cst), and
// -std=c11 leaves its C++ sources at the compiler's default.
func TestCxxStandardFlag(t *testing.T) {
	needClang(t)
	isolateCache(t)
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c := write("a.c", "int bump(void);\nint main(void) { return bump() - 1; }\n")
	cc := write("b.cc", "#include <atomic>\nstatic std::atomic<int> n;\nextern \"C\" int bump() { return n.fetch_add(1, std::memory_order::seq_cst) + 1; }\n")
	if err := Build(Options{Sources: []string{c, cc}, Output: filepath.Join(dir, "a.elf"), Dir: dir, CFlags: []string{"-std=c++20"}}); err != nil {
		t.Fatalf("-std=c++20: %v", err)
	}
	err := Build(Options{Sources: []string{c, cc}, Output: filepath.Join(dir, "b.elf"), Dir: dir, CFlags: []string{"-std=c11"}})
	if err == nil || !strings.Contains(err.Error(), "no member named 'seq_cst'") {
		t.Errorf("-std=c11: %v, want b.cc built at the default C++ standard", err)
	}
	for _, c := range []struct {
		flags []string
		cxx   bool
		want  string
	}{
		{[]string{"-std=c++20", "-DN=2", "-std=c11"}, true, "-std=c++20 -DN=2"},
		{[]string{"-std=c++20", "-DN=2", "-std=c11"}, false, "-DN=2 -std=c11"},
		{[]string{"-std=gnu++17", "-std=gnu11"}, true, "-std=gnu++17"},
	} {
		if got := strings.Join(langFlags(c.flags, c.cxx), " "); got != c.want {
			t.Errorf("langFlags(%v, %v) = %q, want %q", c.flags, c.cxx, got, c.want)
		}
	}
}
