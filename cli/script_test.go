package cli

import (
	"path/filepath"
	"regexp"
	"testing"

	"landslide/fixtures"
	"landslide/internal/testutil"
)

// TestScripts checks what the commands print, text and JSON, on the
// shipped fixtures against the golden scripts in testdata/script (see
// testutil.Scripts for their form). After a deliberate change of output:
//
//	go test ./cli -run TestScripts -rewrite
//
// and read the diff of testdata/script before committing it. Each
// script runs in its own directory ($WORK) holding a link to the
// fixtures, with its own store ($WORK/store), so paths in the output are
// the ones a user types.
func TestScripts(t *testing.T) {
	s := testutil.Scripts{
		Dir:   "testdata/script",
		Links: map[string]string{"fixtures": filepath.Join(fixtures.Root(), "fixtures")},
		Env:   map[string]string{"LANDSLIDE_STORE": "$WORK/store"},
		Run: func(t *testing.T, args []string) (string, string, int) {
			if len(args) == 0 || args[0] != "landslide" {
				t.Fatalf("a script command must start with landslide: %q", args)
			}
			code, stdout, stderr := runCLI(args[1:]...)
			return stdout, stderr, code
		},
		Names:     func() []*testutil.Names { return []*testutil.Names{testutil.NewNames(runID, "RUN")} },
		Normalize: normalizeOutput,
	}
	s.RunAll(t)
}

// What varies from one run or machine to the next: run IDs, durations,
// CPU shares, times of day, the machine and the build.
var (
	runID      = regexp.MustCompile(`(?:\brun|resume|show|replay|races|"run":|"id":) "?([0-9a-f]{12})\b`)
	duration   = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:h|m|s|ms|µs|ns)(?:\d+(?:\.\d+)?(?:h|m|s|ms|µs|ns))*\b`)
	saturation = regexp.MustCompile(`core saturation \d+%`)
	timeOfDay  = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)
	// Times are wall-clock seconds under keys that end in _seconds (with
	// --interleaving-budget, quicksand's clock values are counts under
	// keys that end in _interleavings, and stay).
	jsonTimes = regexp.MustCompile(`"(elapsed_seconds|found_at_seconds|cpu_seconds|core_saturation)": [0-9.e+-]+`)
	jsonEnv   = regexp.MustCompile(`"(version|go|os|arch|host|cpus)": ("[^"]*"|\d+)`)
	showEnv   = regexp.MustCompile(`(?m)^  machine .*$`)
)

func normalizeOutput(s string) string {
	s = duration.ReplaceAllString(s, "<dur>")
	s = saturation.ReplaceAllString(s, "core saturation N%")
	s = timeOfDay.ReplaceAllString(s, "YYYY-MM-DD hh:mm:ss")
	s = jsonTimes.ReplaceAllString(s, `"$1": N`)
	s = showEnv.ReplaceAllString(s, "  machine <env>")
	return jsonEnv.ReplaceAllString(s, `"$1": "<env>"`)
}
