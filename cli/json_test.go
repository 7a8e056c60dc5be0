package cli

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// jsonKeys returns every object key at every depth of v, with its path.
func jsonKeys(v any, path string, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			out[path+"."+k] = k
			jsonKeys(e, path+"."+k, out)
		}
	case []any:
		for i, e := range x {
			jsonKeys(e, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

// TestJSONKeys: every command that prints JSON uses one key style
// (snake_case, at every depth) and does not escape <, > and & (fig1's
// assertion message has a '>'), and ls's race count agrees with show's.
func TestJSONKeys(t *testing.T) {
	dir, td := t.TempDir(), t.TempDir()
	fig1 := fixture(t, "ref/fig1")
	st := func(args ...string) []string { return append([]string{"--store", dir}, args...) }

	cases := [][]string{
		{"run", fig1, "--json"},
		{"version", "--json"},
		st("explore", fixture(t, "ref/fig1"), "--hb", "limited", "--json", "--quiet", "--trace-dir", td),
		st("quicksand", fig1, "--json", "--quiet", "-c", "1", "--interleaving-budget", "20000", "--first-bug", "--trace-dir", td),
	}
	outputs := map[string]string{}
	check := func(args []string) string {
		t.Helper()
		code, out, errOut := runCLI(args...)
		if code == ExitUsage {
			t.Fatalf("%v: exit 2: %s", args, errOut)
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: not JSON: %v\n%s", args, err, out)
		}
		keys := map[string]string{}
		jsonKeys(v, "", keys)
		for path, k := range keys {
			if !snakeKey.MatchString(k) {
				t.Errorf("%v: key %q (at %s) is not snake_case", args, k, path)
			}
		}
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if strings.Contains(out, esc) {
				t.Errorf("%v: output escapes HTML (%s)", args, esc)
			}
		}
		outputs[strings.Join(args, " ")] = out
		return out
	}
	for _, c := range cases {
		check(c)
	}
	if !strings.Contains(strings.Join(mapValues(outputs), ""), ">=") {
		t.Error("no output has a '>' to check the escaping with")
	}

	var runs []struct {
		ID    string `json:"id"`
		Races int    `json:"race_candidates"`
	}
	if err := json.Unmarshal([]byte(check(st("ls", "--json"))), &runs); err != nil || len(runs) != 2 {
		t.Fatalf("ls --json: %v %d runs", err, len(runs))
	}
	for _, r := range runs {
		var show struct {
			Races int `json:"race_candidates"`
		}
		if err := json.Unmarshal([]byte(check(st("show", r.ID, "--json"))), &show); err != nil {
			t.Fatal(err)
		}
		if show.Races != r.Races {
			t.Errorf("run %s: ls says %d race candidates, show %d", r.ID, r.Races, show.Races)
		}
		if show.Races == 0 {
			t.Errorf("run %s: no race candidates: fig1 races on count", r.ID)
		}
		check(st("races", r.ID, "--json"))
		check(st("export", r.ID, "-o", filepath.Join(td, r.ID+".lsa"), "--json"))
	}
	var groups []struct {
		Signature string `json:"signature"`
	}
	if err := json.Unmarshal([]byte(check(st("bugs", "--json"))), &groups); err != nil || len(groups) == 0 {
		t.Fatalf("bugs --json: %v", err)
	}
	check(st("replay", groups[0].Signature[:12], "--format", "json"))
	check(st("verify-store", "--json"))
	check([]string{"--store", t.TempDir(), "import", filepath.Join(td, runs[0].ID+".lsa"), "--json"})
	if _, err := exec.LookPath("clang"); err == nil {
		check([]string{"cc", "-o", filepath.Join(td, "x.elf"), "../fixtures/src/tests/xplusplus.c", "--json"})
	} else {
		t.Error("clang is missing: cc --json is not checked (.ci/run installs it)")
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
