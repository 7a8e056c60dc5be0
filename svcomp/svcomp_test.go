package svcomp

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestParse: the two formats SV-COMP's tasks come in (1.0: no options;
// 2.0: language and data model), input_files as a name or a list, and
// several properties, one without a verdict.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		want      Task
	}{
		{"format 1.0", `format_version: '1.0'

# old file name: stack_true-unreach-call.i
input_files: 'stack-1.i'

properties:
  - property_file: ../properties/unreach-call.prp
    expected_verdict: true
`, Task{Input: "stack-1.i", Properties: []Property{{"unreach-call", True}}}},
		{"format 2.0", `format_version: '2.0'
input_files: ['queue.i', 'extra.c']
properties:
  - property_file: ../properties/unreach-call.prp
    expected_verdict: false
    subproperty: whatever
  - property_file: ../properties/no-data-race.prp
    expected_verdict: false
  - property_file: ../properties/termination.prp
options:
  language: C
  data_model: ILP32
`, Task{Input: "queue.i", Language: "C", DataModel: "ILP32",
			Properties: []Property{{"unreach-call", False}, {"no-data-race", False}, {"termination", ""}}}},
	} {
		got, err := Parse([]byte(c.doc))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, *got, c.want)
		}
	}
	tk, _ := Parse([]byte("input_files: a.i\nproperties:\n  - property_file: p/unreach-call.prp\n    expected_verdict: false\n"))
	if tk.Expected(UnreachCall) != False || tk.Expected("no-data-race") != "" {
		t.Errorf("Expected: %q, %q", tk.Expected(UnreachCall), tk.Expected("no-data-race"))
	}
	for _, bad := range []string{
		"",                          // no input
		"input_files: []\n",         // none either
		"input_files: '../x.i'\n",   // outside the task's directory
		"input_files: '/etc/x.i'\n", // likewise
		"input_files: {a: b}\n",     // neither name nor list
		"input_files: a.i\nproperties:\n  - expected_verdict: true\n", // no property file
		"input_files: a.i\nproperties:\n  - property_file: x.prp\n    expected_verdict: maybe\n",
		"\t: not yaml",
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

// TestFind: every .yml under a directory, subdirectories too, sorted,
// with its input resolved next to it; a broken one is an error naming
// the file.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b/two.yml", "input_files: two.i\n")
	write("a.yml", "input_files: a.i\n")
	write("b/notes.txt", "not a task")
	tasks, err := Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tk := range tasks {
		names = append(names, tk.Name+"="+strings.TrimPrefix(tk.Input, dir))
	}
	if want := []string{"a=/a.i", "b/two=/b/two.i"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Find: %v, want %v", names, want)
	}
	write("c.yml", "input_files: [")
	if _, err := Find(dir); err == nil || !strings.Contains(err.Error(), "c.yml") {
		t.Errorf("Find with a broken task: %v, want an error naming c.yml", err)
	}
}

// TestScore: SV-COMP's scoring, as the issue quotes it: correct true +2,
// correct false +1, wrong false -16, wrong true -32; unknown 0.
func TestScore(t *testing.T) {
	for _, c := range []struct {
		exp, got Verdict
		score    int
		wrong    bool
	}{
		{True, True, 2, false}, {False, False, 1, false}, {True, False, -16, true}, {False, True, -32, true},
		{True, Unknown, 0, false}, {False, Unknown, 0, false}, {"", True, 0, false}, {"", False, 0, false},
	} {
		if s := Score(c.exp, c.got); s != c.score {
			t.Errorf("Score(%q, %q) = %d, want %d", c.exp, c.got, s, c.score)
		}
		if w := Wrong(c.exp, c.got); w != c.wrong {
			t.Errorf("Wrong(%q, %q) = %v", c.exp, c.got, w)
		}
		if Correct(c.exp, c.got) != (c.score > 0) {
			t.Errorf("Correct(%q, %q) = %v", c.exp, c.got, Correct(c.exp, c.got))
		}
	}
}

// glibcLike is what a .i preprocessed against glibc's headers starts
// with: declarations that name long, sizeof and size_t, and glibc's
// inline helpers, none of them the program's own code.
const glibcLike = `typedef unsigned long int __u_long;
__extension__ typedef long int __intmax_t;
typedef unsigned int size_t;
struct tm { int tm_sec; long int tm_gmtoff; const char *tm_zone; };
typedef union { char __size[36]; long int __align; } pthread_attr_t;
extern void *malloc (size_t __size) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__malloc__)) ;
extern long int random (void) __attribute__ ((__nothrow__ , __leaf__));
static __inline __uint64_t __bswap_64 (__uint64_t __bsx) { return __builtin_bswap64 (__bsx) + sizeof (long); }
enum { PTHREAD_CREATE_JOINABLE, PTHREAD_CREATE_DETACHED };
# 12 "task.c"
`

// TestDataModelRisk: a word whose meaning changes from ILP32 to LP64 in
// the program's own code is found, with its function; none in glibc's
// declarations, comments, strings or preprocessor lines.
func TestDataModelRisk(t *testing.T) {
	for _, c := range []struct {
		src, word, where string
	}{
		{"int x; void *f(void *a) { x = 1; return 0; }\nint main() { /* long */ char *s = \"sizeof\"; return x; }\n", "", ""},
		{"int main() { long v = 1; return v; }\n", "long", "main"},
		{"int x;\nvoid *f(void *a) { int *p = malloc(sizeof(struct node)); return p; }\n", "sizeof", "f"},
		{"unsigned long counter;\nint main() { return 0; }\n", "long", "global"},
		{"size_t n = 3;\nint main() { return 0; }\n", "size_t", "global"},
		{"void __VERIFIER_atomic_inc(void) { long t = 1; }\n", "long", "__VERIFIER_atomic_inc"},
		{"static void __helper(void) { long t = 1; }\nint main() { return 0; }\n", "", ""},
		{"struct node { long v; struct node *next; } head;\nint main() { return 0; }\n", "long", "global"},
		{"struct node { int v; };\nint f(struct node *n) { return n->v; }\n", "", ""},
		{"void reach_error() { ((void) sizeof ((0) ? 1 : 0), __extension__ ({ if (0) ; else __assert_fail (\"0\", \"f.c\", 3, __extension__ __PRETTY_FUNCTION__); })); }\n", "", ""},
		{"int f(void) { return sizeof(unsigned int) + sizeof (char); }\n", "", ""},
		{"int f(void) { return sizeof(int *); }\n", "sizeof", "f"},
		{"int f(int *p) { return sizeof p; }\n", "sizeof", "f"},
		{"int f(int *p) { return sizeof(p[0]); }\n", "sizeof", "f"},
	} {
		w, where := DataModelRisk([]byte(glibcLike + c.src))
		if w != c.word || where != c.where {
			t.Errorf("DataModelRisk(%q) = %q in %q, want %q in %q", c.src, w, where, c.word, c.where)
		}
	}
}

// FuzzParse: no task file, however broken, panics the parser, and a
// parsed one names an input inside its directory.
func FuzzParse(f *testing.F) {
	f.Add([]byte("format_version: '2.0'\ninput_files: 'a.i'\nproperties:\n  - property_file: ../properties/unreach-call.prp\n    expected_verdict: true\noptions:\n  language: C\n  data_model: ILP32\n"))
	f.Add([]byte("input_files: [a.i, b.c]\n"))
	f.Add([]byte("input_files: &a x\nproperties: *a\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tk, err := Parse(b)
		if err != nil {
			return
		}
		if tk.Input == "" || filepath.IsAbs(tk.Input) || strings.Contains(tk.Input, "..") {
			t.Fatalf("input %q", tk.Input)
		}
	})
}

// FuzzDataModelRisk: any bytes, no panic; a word found is one of
// dataModelWords.
func FuzzDataModelRisk(f *testing.F) {
	f.Add([]byte(glibcLike + "int main() { long v; return 0; }"))
	f.Add([]byte("}}}{{ ( ; \"unterminated"))
	f.Add([]byte("int f() { /* unterminated"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, _ := DataModelRisk(b)
		if w != "" && firstWord([]string{w}) != w {
			t.Fatalf("word %q", w)
		}
	})
}
