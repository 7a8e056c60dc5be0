package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestExploreTestConfig: a test's LANDSLIDE_CONFIG directives are its
// default configuration. ref/paraguay carries "without thr_create/exit/join"
// (its source says so): explore applies them, names them in the PP set and
// on stderr, and explores exactly what the same --without flags explore;
// --within/--without replace them and --no-test-config drops them.
func TestExploreTestConfig(t *testing.T) {
	prog := fixture(t, "ref/paraguay")
	sync := []string{"mutex_lock", "mutex_unlock"}
	thesis := []string{"without thr_create", "without thr_exit", "without thr_join"}
	doc := func(args ...string) (map[string]any, exploreDoc) {
		t.Helper()
		code, out, _, _ := explore(t, prog, append([]string{"--quiet", "--json", "--max-interleavings", "200"}, args...)...)
		if code != ExitBudget {
			t.Fatalf("%v: exit %d, want 3 (the space is larger than 200)\n%s", args, code, out)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "elapsed_seconds")
		delete(m, "run")
		return m, decodeDoc(t, out)
	}

	def, d := doc()
	if want := append(slices.Clone(sync), thesis...); !slices.Equal(d.PPSet, want) {
		t.Errorf("default PP set %q, want %q", d.PPSet, want)
	}
	flags, _ := doc("--without", "thr_create", "--without", "thr_exit", "--without", "thr_join")
	if !reflect.DeepEqual(def, flags) {
		a, _ := json.Marshal(def)
		b, _ := json.Marshal(flags)
		t.Errorf("the directives and the same --without flags explore differently:\n%s\n%s", a, b)
	}
	_, none := doc("--no-test-config")
	if !slices.Equal(none.PPSet, sync) {
		t.Errorf("--no-test-config: PP set %q, want %q", none.PPSet, sync)
	}
	if none.EstimatedSize <= d.EstimatedSize {
		t.Errorf("with PPs inside thr_* the estimated space (%.0f) is not larger than without (%.0f)", none.EstimatedSize, d.EstimatedSize)
	}
	_, within := doc("--within", "main")
	if want := append(slices.Clone(sync), "within main"); !slices.Equal(within.PPSet, want) {
		t.Errorf("--within main: PP set %q, want %q (the flag replaces the directives)", within.PPSet, want)
	}

	_, _, errOut, _ := explore(t, prog, "--max-interleavings", "1", "--no-store")
	if want := "LANDSLIDE_CONFIG applies: " + strings.Join(thesis, ", "); !strings.Contains(errOut, want) {
		t.Errorf("stderr %q does not say %q", errOut, want)
	}
	for _, args := range [][]string{{"--quiet"}, {"--no-test-config"}, {"--without", "thr_join"}} {
		_, _, errOut, _ := explore(t, prog, append(args, "--max-interleavings", "1", "--no-store")...)
		if strings.Contains(errOut, "LANDSLIDE_CONFIG") {
			t.Errorf("%v: stderr mentions the directives: %q", args, errOut)
		}
	}
}

// TestExploreBadTestConfig: a directive Landslide does not know is exit 2
// naming it, not a silently different exploration; --no-test-config runs
// the program anyway.
func TestExploreBadTestConfig(t *testing.T) {
	data, err := os.ReadFile(fixture(t, "ref/paraguay"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(data, []byte("without thr_join\x00")) != 1 {
		t.Fatal("ref/paraguay.elf does not hold the directive \"without thr_join\" once")
	}
	bad := filepath.Join(t.TempDir(), "paraguay.elf")
	if err := os.WriteFile(bad, bytes.Replace(data, []byte("without thr_join\x00"), []byte("sideway thr_join\x00"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut, _ := explore(t, bad, "--quiet", "--no-store")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, `LANDSLIDE_CONFIG "sideway thr_join"`) || !strings.Contains(errOut, "--no-test-config") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming the directive and --no-test-config", code, out, errOut)
	}
	if code, _, errOut, _ := explore(t, bad, "--quiet", "--no-store", "--no-test-config", "--max-interleavings", "5"); code != ExitBudget {
		t.Errorf("--no-test-config: exit %d, stderr %q", code, errOut)
	}
}
