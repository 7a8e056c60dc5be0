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
// and reader agree), and each one is a directive ParseDirectives accepts.
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
		test, reference := TestDirectives(img.Directives)
		if !slices.Equal(test, want) {
			t.Errorf("%s: directives %q, the sources say %q", f.Name, test, want)
		}
		// The library's directive: in every binary linked with the
		// reference thread.c, in no other (an overlay's thread.c is a
		// library of its own).
		o := f.BuildOptions()
		_, err = os.Stat(filepath.Join(fixtures.Root(), o.Overlay, "thread.c"))
		if wantRef := o.Lib == "ref" && (o.Overlay == "" || err != nil); reference != wantRef {
			t.Errorf("%s: reference_thread_library %v, want %v", f.Name, reference, wantRef)
		}
		d, err := ParseDirectives(img.Directives, img.Symbols)
		n := len(d.Filters)
		if d.TestingMutexes {
			n++
		}
		if err != nil || n != len(want) {
			t.Errorf("%s: directives %+v, %v", f.Name, d, err)
		}
		if d.TestingMutexes != strings.HasPrefix(f.Name[strings.LastIndex(f.Name, "/")+1:], "mutex_test") {
			t.Errorf("%s: testing_mutexes %v: only the mutex tests declare it", f.Name, d.TestingMutexes)
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

// TestParseDirectives: the directive grammar, both spellings, and its errors.
func TestParseDirectives(t *testing.T) {
	f, _ := fixtures.Lookup("ref/paraguay")
	img, err := elfsym.Parse(load(t, f))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseDirectives([]string{"without thr_create", "within_function  main", "testing_mutexes", "within cond_wait", "without_function\tmutex_lock"}, img.Symbols)
	want := []Filter{{Func: "thr_create"}, {Within: true, Func: "main"}, {Within: true, Func: "cond_wait"}, {Func: "mutex_lock"}}
	if err != nil || !slices.Equal(got.Filters, want) || !got.TestingMutexes {
		t.Errorf("directives %+v, %v; want filters %v and testing_mutexes", got, err, want)
	}
	for dir, msg := range map[string]string{
		"without":                 `want "within FUNC", "without FUNC" or "testing_mutexes"`,
		"without a b":             `want "within FUNC", "without FUNC" or "testing_mutexes"`,
		"testing_mutexes yes":     `unknown directive "testing_mutexes"`,
		"sideways thr_create":     `unknown directive "sideways"`,
		"without no_such_func":    `no function "no_such_func"`,
		"preempt_everywhere main": `unknown directive`,
	} {
		_, err := ParseDirectives([]string{"without thr_join", dir}, img.Symbols)
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%q: error %v, want one naming the directive and %q", dir, err, msg)
		}
	}
}
