package kernel

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"landslide/emu/elfsym"
	"landslide/fixtures"
)

var configRE = regexp.MustCompile(`(?m)^LANDSLIDE_CONFIG\("([^"]*)"\);`)

// TestFixtureDirectives: every fixture binary carries exactly the
// LANDSLIDE_CONFIG lines of its sources, in order (macro, linker script
// and reader agree), and each one is a filter TestFilters accepts.
func TestFixtureDirectives(t *testing.T) {
	with := 0
	for _, f := range fixtures.All() {
		var want []string
		for _, src := range f.Sources {
			b, err := os.ReadFile(filepath.Join(fixtures.Root(), src))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range configRE.FindAllStringSubmatch(string(b), -1) {
				want = append(want, m[1])
			}
		}
		img, err := elfsym.Parse(load(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if !slices.Equal(img.Directives, want) {
			t.Errorf("%s: directives %q, the sources say %q", f.Name, img.Directives, want)
		}
		flt, err := TestFilters(img.Directives, img.Symbols)
		if err != nil || len(flt) != len(want) {
			t.Errorf("%s: filters %v, %v", f.Name, flt, err)
		}
		if len(want) > 0 {
			with++
		}
	}
	// paradise_lost, paraguay and broadcast_two_waiters, with the reference
	// library and with their seeded-bug libraries.
	if with < 5 {
		t.Errorf("only %d fixtures carry directives", with)
	}
}

// TestTestFilters: the directive grammar, both spellings, and its errors.
func TestTestFilters(t *testing.T) {
	f, _ := fixtures.Lookup("ref/paraguay")
	img, err := elfsym.Parse(load(t, f))
	if err != nil {
		t.Fatal(err)
	}
	got, err := TestFilters([]string{"without thr_create", "within_function  main", "within cond_wait", "without_function\tmutex_lock"}, img.Symbols)
	want := []Filter{{Func: "thr_create"}, {Within: true, Func: "main"}, {Within: true, Func: "cond_wait"}, {Func: "mutex_lock"}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("filters %v, %v; want %v", got, err, want)
	}
	for dir, msg := range map[string]string{
		"without":                 `want "within FUNC" or "without FUNC"`,
		"without a b":             `want "within FUNC" or "without FUNC"`,
		"sideways thr_create":     `unknown directive "sideways"`,
		"without no_such_func":    `no function "no_such_func"`,
		"preempt_everywhere main": `unknown directive`,
	} {
		_, err := TestFilters([]string{"without thr_join", dir}, img.Symbols)
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%q: error %v, want one naming the directive and %q", dir, err, msg)
		}
	}
}
