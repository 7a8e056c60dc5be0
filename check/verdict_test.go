package check

import (
	"strings"
	"testing"
	"time"

	"landslide/quicksand"
	"landslide/store"
)

// TestQuicksandVerdict: the outcome (the exit code), stored status and message follow
// from the job table, for each way a run ends.
func TestQuicksandVerdict(t *testing.T) {
	type jobEnd = quicksand.Status
	const (
		C = quicksand.Complete
		B = quicksand.BugFound
		T = quicksand.TimedOut
		P = quicksand.Pending
		S = quicksand.Suspended
		N = quicksand.NotStarted
		X = quicksand.Cancelled
		L = quicksand.LimitReached
	)
	const limit = "thread limit: creating a thread would exceed 8 live threads (--max-threads raises it)"
	cases := []struct {
		name     string
		opt      quicksand.Options
		statuses []jobEnd // seeds: { }, {lock}, {unlock}, {lock, unlock} (maximal)
		races    bool     // an uncovered race candidate
		now      time.Duration
		bugs     int
		// after TimeUp:
		want        Outcome
		interrupted bool
		status      store.Status
		has, not    []string
		last        quicksand.Status // of the last job, when set
		lastNote    string
		caveat      []int // the jobs (indices) with the caveat "not exact"
	}{
		{name: "bug", statuses: []jobEnd{C, B, C, X}, now: time.Hour, bugs: 1,
			want: Bug, status: store.StatusBug, has: []string{"1 bug found"}, not: []string{"budget left"}},
		{name: "first bug with budget left", opt: quicksand.Options{FirstBug: true}, statuses: []jobEnd{B, P, S, P}, now: time.Minute, bugs: 1,
			want: Bug, status: store.StatusBug, has: []string{"1 bug found", "ended the run, with budget left"},
			last: N, lastNote: "first bug found"},
		{name: "total verification", statuses: []jobEnd{C, C, C, C}, now: time.Minute,
			want: Verified, status: store.StatusVerified, has: []string{"Total verification", "completed"}, not: []string{"did not"}},
		{name: "control: maximal complete, races never PPs", opt: quicksand.Options{Control: true}, statuses: []jobEnd{C}, races: true, now: time.Second,
			want: NoBug, status: store.StatusBounded, has: []string{"every state space completed", "not a total verification", "1 data-race candidate", "--control"},
			not: []string{"did not complete", "Budget"}},
		{name: "budget spent, maximal timed out", statuses: []jobEnd{C, C, P, S}, now: time.Hour,
			want: Budget, status: store.StatusBudget, has: []string{"Budget spent", "2 of 4 jobs complete, 1 timed out, 1 never started", "did not complete"},
			last: T},
		{name: "interrupted", statuses: []jobEnd{C, C, P, S}, now: time.Minute, interrupted: true,
			want: Interrupted, status: store.StatusStopped, has: []string{"Interrupted", "2 of 4 jobs complete", "resumed"}},
		{name: "budget spent, maximal complete, race jobs timed out", statuses: []jobEnd{C, C, C, C, P}, races: true, now: time.Hour,
			want: Budget, status: store.StatusBudget, has: []string{"Budget spent", "completed, but 1 data-race candidate stayed uncovered"},
			not: []string{"did not complete"}},
		{name: "total verification, not exact", statuses: []jobEnd{C, C, C, C}, now: time.Minute, caveat: []int{1, 3},
			want: Verified, status: store.StatusVerified, has: []string{"Total verification", "candidate. Caveat (jobs 2, 4): not exact."}},
		{name: "budget spent, not exact in many jobs", statuses: []jobEnd{C, C, C, C, C, C, C, P}, races: true, now: time.Hour, caveat: []int{0, 1, 2, 3, 4, 5, 6},
			want: Budget, status: store.StatusBudget, has: []string{"Budget spent", "uncovered. Caveat (jobs 1, 2, 3, 4, 5, and 2 more): not exact."}},
		{name: "bug, not exact", statuses: []jobEnd{C, B, C, X}, now: time.Hour, bugs: 1, caveat: []int{0},
			want: Bug, status: store.StatusBug, has: []string{"1 bug found"}, not: []string{"Caveat", "not exact"}},
		// A checker limit is never a bug and never a verification, even
		// with the maximal state space complete.
		{name: "limit", statuses: []jobEnd{C, L, C, C}, now: time.Minute,
			want: Limit, status: store.StatusLimit, has: []string{"Limit: no bug found, but job 2", limit, "3 of 4 jobs complete; not a verification."},
			not: []string{"Total verification", "1 bug", "timed out", "Interrupted"}},
		{name: "a bug and a limit", statuses: []jobEnd{L, B, C, X}, now: time.Minute, bugs: 1,
			want: Bug, status: store.StatusBug, has: []string{"1 bug found"}, not: []string{"limit"}},
		{name: "limits, budget spent", statuses: []jobEnd{L, L, P, S}, now: time.Hour,
			want: Limit, status: store.StatusLimit, has: []string{"2 jobs went past a limit of the checker", "the first, job 1", limit, "0 of 4 jobs complete, 1 timed out, 1 never started"},
			last: T},
		{name: "limit, interrupted", statuses: []jobEnd{L, C, P, S}, now: time.Minute, interrupted: true,
			want: Limit, status: store.StatusLimit, has: []string{"job 1", limit, "Interrupted: the run can be resumed."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opt.Budget = time.Hour
			s := quicksand.New(c.opt, []string{"mutex_lock", "mutex_unlock"})
			for len(s.Jobs) < len(c.statuses) { // an extra job: a data-race job
				s.Jobs = append(s.Jobs, &quicksand.Job{ID: len(s.Jobs) + 1, Set: s.Jobs[1].Set, Origin: "race"})
			}
			if len(s.Jobs) != len(c.statuses) {
				t.Fatalf("%d seed jobs, %d statuses", len(s.Jobs), len(c.statuses))
			}
			for i, st := range c.statuses {
				s.Jobs[i].Status = st
				if st == L {
					s.Jobs[i].Limit = limit
				}
			}
			for _, i := range c.caveat {
				s.Jobs[i].Caveat = "not exact"
			}
			if c.races {
				s.Races = append(s.Races, quicksand.RaceNote{Race: quicksand.Race{PCA: 0x1000, PCB: 0x2000, BothOrder: true}})
			}
			s.Now = c.now
			s.TimeUp()
			v := quicksandVerdict(s, c.bugs, c.interrupted)
			if v.Outcome != c.want || v.Status != c.status {
				t.Errorf("outcome %d, status %s; want %d, %s (%s)", v.Outcome, v.Status, c.want, c.status, v.Message)
			}
			for _, h := range c.has {
				if !strings.Contains(v.Message, h) {
					t.Errorf("message %q lacks %q", v.Message, h)
				}
			}
			for _, h := range c.not {
				if strings.Contains(v.Message, h) {
					t.Errorf("message %q says %q", v.Message, h)
				}
			}
			if j := s.Jobs[len(s.Jobs)-1]; c.last != 0 && (j.Status != c.last || j.Note != c.lastNote) {
				t.Errorf("last job: %s (%q), want %s (%q)", j.Status, j.Note, c.last, c.lastNote)
			}
		})
	}
}
