// Package svcomp reads SV-COMP's verification tasks and scores verdicts
// as the competition does. A task is a .yml file naming its input
// program (input_files), the properties to check with their expected
// verdicts (properties: property_file, expected_verdict) and, from
// format 2.0 on, the program's language and data model (options). The
// package knows nothing of how a verdict is reached: landslide suite
// --svcomp builds and explores each task (the kernel's SV-COMP mode,
// kernel.Config.SVCOMP) and asks this package what the verdict scores.
package svcomp

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Verdict is a verification answer: "true" (the property holds),
// "false" (a violation), "unknown".
type Verdict string

// The verdicts.
const (
	True    Verdict = "true"
	False   Verdict = "false"
	Unknown Verdict = "unknown"
)

// UnreachCall is the property Landslide checks: reach_error (or
// __VERIFIER_error) is never called.
const UnreachCall = "unreach-call"

// Task is one verification task.
type Task struct {
	// Name is the .yml's path relative to the directory searched, without
	// its extension.
	Name string
	// YML is the task file; Input its first input file (absolute).
	YML, Input string
	// Properties are the property files' names without .prp (as
	// "unreach-call", "no-data-race"), with their expected verdicts
	// ("" where the task states none).
	Properties []Property
	// Language and DataModel are the options ("" where not stated:
	// format 1.0 tasks).
	Language, DataModel string
}

// Property is one property of a task.
type Property struct {
	Name     string
	Expected Verdict
}

// Expected is the expected verdict of property name, or "" when the task
// does not name the property (or states no verdict).
func (t *Task) Expected(name string) Verdict {
	for _, p := range t.Properties {
		if p.Name == name {
			return p.Expected
		}
	}
	return ""
}

// file is the .yml document.
type file struct {
	FormatVersion string    `yaml:"format_version"`
	InputFiles    inputList `yaml:"input_files"`
	Properties    []struct {
		PropertyFile    string `yaml:"property_file"`
		ExpectedVerdict *bool  `yaml:"expected_verdict"`
	} `yaml:"properties"`
	Options struct {
		Language  string `yaml:"language"`
		DataModel string `yaml:"data_model"`
	} `yaml:"options"`
}

// inputList is input_files: one name or a list of them.
type inputList []string

func (l *inputList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = []string{n.Value}
		return nil
	case yaml.SequenceNode:
		var s []string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*l = s
		return nil
	}
	return fmt.Errorf("line %d: input_files is neither a name nor a list of names", n.Line)
}

// maxTaskFile bounds a .yml read (a task file is a few hundred bytes).
const maxTaskFile = 1 << 20

// Load reads the task file path; name is its Name.
func Load(path, name string) (*Task, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) > maxTaskFile {
		return nil, fmt.Errorf("%s: %d bytes: not a task file", path, len(b))
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t.Name, t.YML = name, path
	t.Input = filepath.Join(filepath.Dir(path), t.Input)
	return t, nil
}

// Parse decodes a task file; Input is as the file names it (relative to
// the file's directory), and Name and YML are empty.
func Parse(b []byte) (*Task, error) {
	var f file
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("not a task file: %v", firstLine(err.Error()))
	}
	if len(f.InputFiles) == 0 || f.InputFiles[0] == "" {
		return nil, errors.New("the task names no input file (input_files)")
	}
	in := f.InputFiles[0]
	if filepath.IsAbs(in) || strings.Contains(in, "..") {
		return nil, fmt.Errorf("input file %q is outside the task's directory", in)
	}
	t := &Task{Input: in, Language: f.Options.Language, DataModel: f.Options.DataModel}
	for _, p := range f.Properties {
		if p.PropertyFile == "" {
			return nil, errors.New("a property names no property_file")
		}
		pr := Property{Name: strings.TrimSuffix(filepath.Base(p.PropertyFile), ".prp")}
		if p.ExpectedVerdict != nil {
			pr.Expected = False
			if *p.ExpectedVerdict {
				pr.Expected = True
			}
		}
		t.Properties = append(t.Properties, pr)
	}
	return t, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Find loads every task file (*.yml) under dir, in its subdirectories
// too, sorted by Name. A file that is no task is an error naming it.
func Find(dir string) ([]*Task, error) {
	var out []*Task
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".yml") {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		t, err := Load(path, strings.TrimSuffix(filepath.ToSlash(rel), ".yml"))
		if err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// Score is what SV-COMP awards a verdict got for a property whose
// expected verdict is expected: +2 for a correct true, +1 for a correct
// false, -32 for a wrong true, -16 for a wrong false, 0 for unknown (or
// an expectation the task does not state).
func Score(expected, got Verdict) int {
	switch {
	case got == Unknown || expected == "" || expected == Unknown:
		return 0
	case got == True && expected == True:
		return 2
	case got == False && expected == False:
		return 1
	case got == True:
		return -32
	default:
		return -16
	}
}

// Correct reports whether got is a definite verdict equal to expected.
func Correct(expected, got Verdict) bool { return got != Unknown && got == expected }

// Wrong reports whether got is a definite verdict other than expected
// (where one is stated).
func Wrong(expected, got Verdict) bool {
	return got != Unknown && expected != "" && expected != Unknown && got != expected
}

// dataModelWords are the C words whose meaning differs between ILP32 and
// LP64: a program that uses one may behave differently on Landslide's
// LP64 machine than the task's ILP32 data model says.
var dataModelWords = []string{"long", "sizeof", "size_t", "ssize_t", "intptr_t", "uintptr_t", "ptrdiff_t", "_Alignof", "__alignof__",
	"time_t", "clock_t", "off_t"}

// DataModelRisk looks at a C program for what an ILP32 task depends on
// that LP64 changes: a word of dataModelWords in the program's own code
// (the bodies of the functions it defines and its object definitions; not
// the declarations of the headers it was preprocessed with: extern and
// typedef declarations, type definitions, and the bodies of functions
// whose names start with "__", glibc's inline helpers, save
// __VERIFIER_ ones). It returns the first such word and the function (or
// "global") it is in, or "" if there is none. It errs on the side of
// finding one: a definite verdict rests on its finding none.
func DataModelRisk(src []byte) (word, where string) {
	toks := tokenize(src)
	depth := 0
	stmt := 0 // first token of the top-level statement in progress
	for i := 0; i < len(toks); i++ {
		switch toks[i] {
		case "{":
			if depth == 0 {
				// A function body: ")" (or an attribute list) before it.
				name, isFunc := funcName(toks[stmt:i])
				end := matchBrace(toks, i)
				if isFunc {
					if !strings.HasPrefix(name, "__") || strings.HasPrefix(name, "__VERIFIER_") {
						if w := firstWord(toks[stmt:end]); w != "" {
							return w, name
						}
					}
					i, stmt = end, end+1
					continue
				}
			}
			depth++
		case "}":
			depth--
		case ";":
			if depth == 0 {
				if s := toks[stmt:i]; !declarationOnly(s) {
					if w := firstWord(s); w != "" {
						return w, "global"
					}
				}
				stmt = i + 1
			}
		}
	}
	return "", ""
}

// declarationOnly reports whether a top-level statement declares without
// defining an object of the program: extern and typedef declarations,
// function prototypes, and type definitions with no declarator.
func declarationOnly(s []string) bool {
	if len(s) == 0 {
		return true
	}
	for _, t := range s {
		if t == "__extension__" || t == "static" || t == "const" || t == "volatile" {
			continue
		}
		if t == "extern" || t == "typedef" {
			return true
		}
		break
	}
	if last := s[len(s)-1]; last == "}" && (slices.Contains(s, "struct") || slices.Contains(s, "union") || slices.Contains(s, "enum")) {
		return true // struct S { ... };
	}
	// A prototype: name ( ... ) [attributes] with no "=".
	if !slices.Contains(s, "=") && slices.Contains(s, "(") && !slices.Contains(s, "{") {
		return true
	}
	return false
}

// funcName finds, in the tokens before a top-level "{", whether they
// declare a function (an identifier, then a parenthesized parameter list,
// then at most attributes), and its name.
func funcName(s []string) (string, bool) {
	if len(s) == 0 || slices.Contains(s, "=") {
		return "", false
	}
	for _, t := range s {
		if t == "struct" || t == "union" || t == "enum" {
			if s[len(s)-1] != ")" {
				return "", false
			}
		}
	}
	for i := 0; i+1 < len(s); i++ {
		if s[i+1] == "(" && isIdent(s[i]) && s[i] != "__attribute__" && s[i] != "__attribute" {
			return s[i], s[len(s)-1] == ")"
		}
	}
	return "", false
}

func matchBrace(toks []string, i int) int {
	d := 0
	for j := i; j < len(toks); j++ {
		switch toks[j] {
		case "{":
			d++
		case "}":
			if d--; d == 0 {
				return j
			}
		}
	}
	return len(toks) - 1
}

func firstWord(s []string) string {
	for i, t := range s {
		if t == "sizeof" && sameSizeOperand(s[i+1:]) {
			continue
		}
		for _, w := range dataModelWords {
			if t == w {
				return w
			}
		}
	}
	return ""
}

// sameSizeWords are the words a sizeof operand may hold whose size
// ILP32 and LP64 agree on (glibc's assert expands to sizeof ((0) ? 1 :
// 0), for one).
var sameSizeWords = map[string]bool{"int": true, "char": true, "short": true, "unsigned": true, "signed": true,
	"float": true, "double": true, "_Bool": true, "const": true, "volatile": true}

// sameSizeOperand reports whether toks start with a parenthesized sizeof
// operand whose size is the same under ILP32 and LP64: only numbers,
// sameSizeWords and operators (no identifier, whose type may be a
// pointer or hold one, and no "*").
func sameSizeOperand(toks []string) bool {
	if len(toks) == 0 || toks[0] != "(" {
		return false
	}
	d := 0
	for _, t := range toks {
		switch {
		case t == "(":
			d++
		case t == ")":
			if d--; d == 0 {
				return true
			}
		case t == "*" || t == "[" || t == "lit":
			return false
		case t[0] >= '0' && t[0] <= '9' || sameSizeWords[t]:
		case isIdent(t):
			return false
		}
	}
	return false
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// tokenize splits C source into identifiers, numbers and punctuation,
// dropping comments, string and character literals, and preprocessor
// lines.
func tokenize(src []byte) []string {
	var out []string
	b := src
	bol := true
	for len(b) > 0 {
		c := b[0]
		switch {
		case c == '\n':
			bol = true
			b = b[1:]
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			b = b[1:]
			continue
		case bol && c == '#':
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				i = len(b)
			}
			b = b[i:]
			continue
		}
		bol = false
		switch {
		case c == '/' && len(b) > 1 && b[1] == '/':
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				i = len(b)
			}
			b = b[i:]
		case c == '/' && len(b) > 1 && b[1] == '*':
			i := bytes.Index(b[2:], []byte("*/"))
			if i < 0 {
				b = nil
			} else {
				b = b[i+4:]
			}
		case c == '"' || c == '\'':
			i := 1
			for i < len(b) && b[i] != c && b[i] != '\n' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			b = b[min(i+1, len(b)):]
			out = append(out, "lit")
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '$':
			i := 1
			for i < len(b) && (b[i] == '_' || b[i] == '$' || b[i] >= 'a' && b[i] <= 'z' || b[i] >= 'A' && b[i] <= 'Z' || b[i] >= '0' && b[i] <= '9') {
				i++
			}
			out = append(out, string(b[:i]))
			b = b[i:]
		default:
			out = append(out, string(b[:1]))
			b = b[1:]
		}
	}
	return out
}
