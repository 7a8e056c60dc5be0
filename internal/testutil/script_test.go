package testutil

import (
	"regexp"
	"slices"
	"testing"
)

const sample = `# comment

landslide a
----
exit 0
-- stdout --
one

landslide 'b c' "d e"
----
----
exit 1
-- stdout --
x

y
----
----
# trailing comment
`

func TestParseScript(t *testing.T) {
	cs, err := ParseScript(sample)
	if err != nil {
		t.Fatal(err)
	}
	want := []Case{{3, "landslide a", "exit 0\n-- stdout --\none\n"}, {9, `landslide 'b c' "d e"`, "exit 1\n-- stdout --\nx\n\ny\n"}}
	if !slices.Equal(cs, want) {
		t.Fatalf("ParseScript = %+v, want %+v", cs, want)
	}
	for _, bad := range []string{"landslide a\nexit 0\n", "landslide a\n----\n----\nexit 0\n"} {
		if _, err := ParseScript(bad); err == nil {
			t.Errorf("ParseScript(%q): no error", bad)
		}
	}
}

// TestRewriteScript: rewriting with the outputs parsed gives the file
// back; new outputs take the short or the long form as they need, and
// parse back to themselves.
func TestRewriteScript(t *testing.T) {
	cs, _ := ParseScript(sample)
	if got := RewriteScript(sample, cs, []string{cs[0].Want, cs[1].Want}); got != sample {
		t.Fatalf("round trip:\n%s\nwant\n%s", got, sample)
	}
	outs := []string{"exit 2\n-- stdout --\na\n\nb\n", "exit 0\n"}
	re := RewriteScript(sample, cs, outs)
	cs2, err := ParseScript(re)
	if err != nil {
		t.Fatalf("%v\n%s", err, re)
	}
	if len(cs2) != 2 || cs2[0].Want != outs[0] || cs2[1].Want != outs[1] || cs2[1].Cmd != cs[1].Cmd {
		t.Fatalf("rewritten script parses to %+v\n%s", cs2, re)
	}
}

func TestSplitCommand(t *testing.T) {
	got, err := SplitCommand(`landslide  run 'a b' "c'd" e""f`)
	if want := []string{"landslide", "run", "a b", "c'd", "ef"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("SplitCommand = %q, %v; want %q", got, err, want)
	}
	if _, err := SplitCommand(`a 'b`); err == nil {
		t.Error("unclosed quote: no error")
	}
}

func TestNames(t *testing.T) {
	n := NewNames(regexp.MustCompile(`run ([0-9a-f]{4})`), "RUN")
	if got := n.Replace("run beef, run cafe, beef"); got != "run RUN1, run RUN2, RUN1" {
		t.Errorf("first call: %q", got)
	}
	if got := n.Replace("show cafe; run f00d"); got != "show RUN2; run RUN3" {
		t.Errorf("second call: %q", got)
	}
	if v, ok := n.Value("RUN2"); !ok || v != "cafe" {
		t.Errorf("Value(RUN2) = %q, %v", v, ok)
	}
	if _, ok := n.Value("RUN4"); ok {
		t.Error("Value(RUN4): a name never given")
	}
}

func TestFormatOutput(t *testing.T) {
	if got := FormatOutput(3, "", "e"); got != "exit 3\n-- stderr --\ne\n[no newline at the end]\n" {
		t.Errorf("FormatOutput = %q", got)
	}
}
