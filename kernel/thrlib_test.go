package kernel

import (
	"slices"
	"testing"

	"landslide/fixtures"
	"landslide/schedule"
)

// TestThreadLibraryModel: with ModelThreads the reference library's
// thr_create, thr_join and thr_exit are PPs of their own and never run
// their bodies (the library's thr_lock is never taken), a PP the user
// puts at thr_init still stops there, and thr_join_errors, which checks
// the library's results, passes under random schedules.
func TestThreadLibraryModel(t *testing.T) {
	f, ok := fixtures.Lookup("ref/thr_join_errors")
	if !ok {
		t.Fatal("no fixture ref/thr_join_errors")
	}
	img := load(t, f)
	for seed := uint64(1); seed <= 20; seed++ {
		o := play(t, img, Config{ModelThreads: true, EveryAccess: true, SyncPPs: []string{"thr_init", "mutex_lock"}}, schedule.NewRandom(seed))
		if o.Bug != nil || string(o.Stdout) != "thr_join_errors: ok\n" {
			t.Fatalf("seed %d: bug %v, output %q", seed, o.Bug, o.Stdout)
		}
		var pps []string
		for _, tr := range o.Transitions {
			pps = append(pps, tr.PP.Func)
		}
		for _, want := range []string{"thr_init", "thr_create", "thr_join", "thr_exit"} {
			if !slices.Contains(pps, want) {
				t.Fatalf("seed %d: no %s PP in %q", seed, want, pps)
			}
		}
		if slices.Contains(pps, "mutex_lock") {
			t.Fatalf("seed %d: a mutex_lock PP: the library's own thread code ran (%q)", seed, pps)
		}
	}
}
