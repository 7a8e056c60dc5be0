package testutil

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Rewrite makes RunScripts write what the commands print into the script
// files instead of comparing: `go test ./cli -run TestScripts -rewrite`,
// then read the diff before committing it.
var Rewrite = flag.Bool("rewrite", false, "rewrite the expected output of golden test scripts (testdata/script/*.txt)")

// A script is a file of cases, each a command line, a line "----", and
// the output expected, in the manner of pebble's datadriven tests:
//
//	# A comment (lines starting with # and blank lines between cases).
//	landslide explore fixtures/bin/ref/fig1.elf --quiet
//	----
//	exit 0
//	-- stdout --
//	Verified: ...
//
// The expected output ends at the first blank line, or, when the output
// itself has blank lines, it sits between two "----" lines and ends at
// the next two (RunScripts chooses the form when it rewrites). Output is
// the exit code, then stdout and stderr, each only when not empty.
//
// A command line is split into words at spaces; single or double quotes
// keep spaces in a word. $WORK, $HOME and the variables of Scripts.Env
// are expanded in it.

// Scripts runs every *.txt file of Dir as a subtest. Each file gets a
// fresh working directory ($WORK): the test's current directory while
// the file's commands run, with Links in it; the commands of a file run in
// order and share it, so a later command sees what an earlier one wrote.
type Scripts struct {
	Dir string
	// Links are symbolic links made in $WORK: name to target.
	Links map[string]string
	// Env is set for the file's commands (values may use $WORK).
	Env map[string]string
	// Run executes one command line (its words, variables expanded).
	Run func(t *testing.T, args []string) (stdout, stderr string, code int)
	// Names are the generated identifiers (run IDs) a file's output
	// names by number, fresh for each file; a later command refers to
	// one as $NAME (e.g. $RUN1).
	Names func() []*Names
	// Normalize rewrites output before it is compared, for what is not
	// deterministic (durations); $WORK's path and the Names are replaced
	// before it.
	Normalize func(string) string
}

// Case is one command of a script and the output expected.
type Case struct {
	Line int // of the command, 1-based
	Cmd  string
	Want string
}

// RunAll runs every script file in s.Dir.
func (s *Scripts) RunAll(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(s.Dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scripts in %s", s.Dir)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { s.runFile(t, f) })
	}
}

func (s *Scripts) runFile(t *testing.T, path string) {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := ParseScript(string(src))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if w, err := filepath.EvalSymlinks(work); err == nil {
		work = w
	}
	for name, target := range s.Links {
		if err := os.Symlink(target, filepath.Join(work, name)); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"WORK": work}
	for k, v := range s.Env {
		v = os.Expand(v, func(n string) string { return vars[n] })
		vars[k] = v
		t.Setenv(k, v)
	}
	t.Chdir(work)
	var names []*Names
	if s.Names != nil {
		names = s.Names()
	}
	norm := func(out string) string {
		out = strings.ReplaceAll(out, work, "$WORK")
		for _, n := range names {
			out = n.Replace(out)
		}
		if s.Normalize != nil {
			out = s.Normalize(out)
		}
		return out
	}
	expand := func(n string) string {
		if v, ok := vars[n]; ok {
			return v
		}
		for _, ns := range names {
			if v, ok := ns.Value(n); ok {
				return v
			}
		}
		return "$" + n
	}
	got := make([]string, len(cases))
	for i, c := range cases {
		args, err := SplitCommand(os.Expand(c.Cmd, expand))
		if err != nil {
			t.Fatalf("%s:%d: %v", path, c.Line, err)
		}
		stdout, stderr, code := s.Run(t, args)
		out := FormatOutput(code, stdout, stderr)
		got[i] = norm(out)
		if !*Rewrite && got[i] != c.Want {
			t.Errorf("%s:%d: %s\n--- want\n%s\n--- got\n%s", filepath.Base(path), c.Line, c.Cmd, c.Want, got[i])
		}
	}
	if *Rewrite {
		if err := os.WriteFile(abs, []byte(RewriteScript(string(src), cases, got)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// FormatOutput is a command's result as a script states it.
func FormatOutput(code int, stdout, stderr string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit %d\n", code)
	for _, p := range []struct{ name, text string }{{"stdout", stdout}, {"stderr", stderr}} {
		if p.text == "" {
			continue
		}
		fmt.Fprintf(&b, "-- %s --\n%s", p.name, p.text)
		if !strings.HasSuffix(p.text, "\n") {
			b.WriteString("\n[no newline at the end]\n")
		}
	}
	return b.String()
}

// ParseScript reads a script's cases.
func ParseScript(src string) ([]Case, error) {
	var cases []Case
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := Case{Line: i + 1, Cmd: l}
		i++
		if i >= len(lines) || lines[i] != "----" {
			return nil, fmt.Errorf("line %d: %q is not followed by ----", c.Line, l)
		}
		i++
		var want []string
		if i < len(lines) && lines[i] == "----" {
			// The long form: up to the next "----" pair.
			for i++; ; i++ {
				if i+1 >= len(lines) {
					return nil, fmt.Errorf("line %d: the output is not closed by two ---- lines", c.Line)
				}
				if lines[i] == "----" && lines[i+1] == "----" {
					i++
					break
				}
				want = append(want, lines[i])
			}
		} else {
			for ; i < len(lines) && lines[i] != ""; i++ {
				want = append(want, lines[i])
			}
		}
		if len(want) > 0 {
			c.Want = strings.Join(want, "\n") + "\n"
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// RewriteScript is src with each case's expected output replaced by got:
// comments, commands and the blank lines between cases are kept.
func RewriteScript(src string, cases []Case, got []string) string {
	lines := strings.Split(src, "\n")
	var b strings.Builder
	next := 0 // the next line of src to copy
	for k, c := range cases {
		for ; next < c.Line; next++ { // up to and including the command
			b.WriteString(lines[next] + "\n")
		}
		// Skip the old output: "----", then the short or long form.
		end := next + 1
		if end < len(lines) && lines[end] == "----" {
			for end++; end+1 < len(lines) && !(lines[end] == "----" && lines[end+1] == "----"); end++ {
			}
			end += 2
		} else {
			for ; end < len(lines) && lines[end] != ""; end++ {
			}
		}
		next = end
		b.WriteString("----\n")
		if strings.Contains(got[k], "\n\n") || strings.HasPrefix(got[k], "\n") {
			b.WriteString("----\n" + got[k] + "----\n----\n")
		} else {
			b.WriteString(got[k])
			if next < len(lines) && lines[next] != "" {
				b.WriteString("\n") // a short output ends at a blank line
			}
		}
	}
	for ; next < len(lines); next++ {
		b.WriteString(lines[next])
		if next < len(lines)-1 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// SplitCommand splits a command line into words at spaces; quotes keep
// spaces in a word.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote in %q", s)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// Names numbers generated identifiers: each distinct match of its
// pattern's first group becomes Prefix and a number, in order of first
// appearance, for the whole of a script (a run ID keeps its name).
type Names struct {
	re     *regexp.Regexp
	prefix string
	seen   []string
}

// NewNames numbers the first group of re's matches as prefix1, prefix2...
func NewNames(re *regexp.Regexp, prefix string) *Names { return &Names{re: re, prefix: prefix} }

// Replace names every identifier s holds (those seen before included).
func (n *Names) Replace(s string) string {
	for _, m := range n.re.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(n.seen, m[1]) {
			n.seen = append(n.seen, m[1])
		}
	}
	for i, id := range n.seen {
		s = strings.ReplaceAll(s, id, n.name(i))
	}
	return s
}

// Value is the identifier a name stands for.
func (n *Names) Value(name string) (string, bool) {
	for i, id := range n.seen {
		if n.name(i) == name {
			return id, true
		}
	}
	return "", false
}

func (n *Names) name(i int) string { return fmt.Sprintf("%s%d", n.prefix, i+1) }
