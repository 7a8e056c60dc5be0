package isatest

import (
	"strings"
	"testing"
)

func TestDiffOutput(t *testing.T) {
	cases := []struct {
		want, got string
		contains  []string // "" result when nil
	}{
		{"a\nb\n", "a\nb\n", nil},
		{"", "", nil},
		{"a\nb\nc\n", "a\nX\nc\n", []string{"line 2", `qemu: "b\n"`, `ours: "X\n"`, `previous line: "a\n"`}},
		{"a\nb\n", "a\n", []string{"line 2", `qemu: "b\n"`, "ours: (end of output)"}},
		{"a\n", "a\nextra\n", []string{"line 2", "qemu: (end of output)", `ours: "extra\n"`}},
		{"x\n", "y\n", []string{"line 1", `qemu: "x\n"`, `ours: "y\n"`}},
		{"a\nb", "a\nb\n", []string{"line 2", `qemu: "b"`, `ours: "b\n"`}},
	}
	for _, c := range cases {
		d := diffOutput("qemu", []byte(c.want), "ours", []byte(c.got))
		if c.contains == nil {
			if d != "" {
				t.Errorf("diffOutput(%q, %q) = %q, want no difference", c.want, c.got, d)
			}
			continue
		}
		for _, s := range c.contains {
			if !strings.Contains(d, s) {
				t.Errorf("diffOutput(%q, %q) = %q, want it to contain %q", c.want, c.got, d, s)
			}
		}
	}
}

func TestFailLines(t *testing.T) {
	out := "check a -> 1\ncheck b -> 2 FAIL want 3\nadd 1 2 -> 3\n"
	if got, want := failLines([]byte(out)), "check b -> 2 FAIL want 3\n"; got != want {
		t.Errorf("failLines = %q, want %q", got, want)
	}
}
