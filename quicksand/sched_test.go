package quicksand

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

var inf = math.Inf(1)

func seeded(t *testing.T, opt Options) *Sched {
	t.Helper()
	if opt.Budget == 0 {
		opt.Budget = time.Hour
	}
	return New(opt, []string{"mutex_lock", "mutex_unlock"})
}

func sets(s *Sched) []string {
	var out []string
	for _, j := range s.Jobs {
		out = append(out, s.Reg.Describe(j.Set))
	}
	return out
}

// run starts job id and reports n interleavings with the given ETA (in
// seconds) at clock time now (seconds).
func report(s *Sched, id, n int, eta float64, now float64) Decision {
	return s.Progress(s.Jobs[id], n, eta*float64(time.Second), 0.5, time.Duration(now*float64(time.Second)))
}

func TestSeeds(t *testing.T) {
	s := seeded(t, Options{})
	want := []string{"{ }", "{ 'mutex_lock' }", "{ 'mutex_unlock' }", "{ 'mutex_lock' 'mutex_unlock' }"}
	if got := sets(s); !slices.Equal(got, want) {
		t.Fatalf("seeds %q, want %q", got, want)
	}
	if s.Jobs[0].Reproduces || !s.Jobs[1].Reproduces || !s.Jobs[3].Reproduces {
		t.Error("the { } seed must not reproduce; the others must")
	}
	// Pending order by the most urgent unexplored PP (the source's
	// unexplored_priority), then size: { } (0), {lock} (4), {lock,
	// unlock} (4, larger), {unlock} (8).
	var order []int
	for j := s.Next(); j != nil; j = s.Next() {
		s.Start(j)
		order = append(order, j.ID)
	}
	if !slices.Equal(order, []int{1, 2, 4, 3}) {
		t.Errorf("start order %v", order)
	}
	for _, opt := range []Options{{Maximal: true}, {Control: true}} {
		s := seeded(t, opt)
		if got := sets(s); len(got) != 1 || got[0] != want[3] {
			t.Errorf("%+v: seeds %q, want only the maximal set", opt, got)
		}
		if s.Jobs[0].Reproduces == opt.Control {
			t.Errorf("%+v: reproduces %v", opt, s.Jobs[0].Reproduces)
		}
	}
}

// TestSuspendLine1: a job whose ETA fits in ETAFactor × the time left goes
// on; one that does not is suspended when a better job exists. Budget 1 h.
func TestSuspendLine1(t *testing.T) {
	s := seeded(t, Options{})
	s.Start(s.Jobs[3])
	// 10 minutes in, 50 left: the line is 100 minutes.
	if d := report(s, 3, 100, 99*60, 600); d != Continue {
		t.Errorf("ETA 99 min < 2×50 min: %v, want continue", d)
	}
	// Pending jobs 0-2 are subsets of job 3, not supersets: each is better.
	if d := report(s, 3, 200, 101*60, 600); d != Suspend {
		t.Errorf("ETA 101 min > 2×50 min with pending jobs: %v, want suspend", d)
	}
	if d := report(s, 3, 300, inf, 600); d != Suspend {
		t.Errorf("unknown ETA: %v, want suspend", d)
	}
}

// TestSuspendThresholds: never before ETAThreshold interleavings since the
// job (re)started, nor in the home stretch.
func TestSuspendThresholds(t *testing.T) {
	s := seeded(t, Options{})
	j := s.Jobs[3]
	s.Start(j)
	if d := report(s, 3, 31, inf, 10); d != Continue {
		t.Errorf("31 interleavings: %v, want continue (threshold 32)", d)
	}
	if d := report(s, 3, 32, inf, 10); d != Suspend {
		t.Errorf("32 interleavings: %v, want suspend", d)
	}
	s.Suspended(j)
	s.Start(j) // resumed: the threshold counts again from here
	if d := report(s, 3, 40, inf, 20); d != Continue {
		t.Errorf("8 interleavings after resuming: %v, want continue", d)
	}
	if d := report(s, 3, 100, inf, 3600-61); d != Suspend {
		t.Errorf("61 s left: %v, want suspend", d)
	}
	if d := report(s, 3, 100, inf, 3600-60); d != Continue {
		t.Errorf("60 s left (home stretch): %v, want continue", d)
	}
	if d := report(s, 3, 101, inf, 3600); d != Stop {
		t.Errorf("no time left: %v, want stop", d)
	}
}

// TestOptionsDefaults: every unset field of Options is its default, the
// home stretch's and the walk slice's depending on the clock (and the
// slice's on the budget); negative values are "none" and stay so; set
// values are kept; -M and -C run no walks.
func TestOptionsDefaults(t *testing.T) {
	cases := []struct{ in, want Options }{
		{Options{}, Options{ETAFactor: 2, ETAThreshold: 32, HomeStretch: 60 * time.Second, Workers: 1,
			WalkShare: DefaultWalkShare, WalkSlice: 250 * time.Millisecond, WalkDepth: 3}},
		{Options{Budget: time.Hour}, Options{Budget: time.Hour, ETAFactor: 2, ETAThreshold: 32, HomeStretch: 60 * time.Second, Workers: 1,
			WalkShare: DefaultWalkShare, WalkSlice: 30 * time.Second, WalkDepth: 3}},
		{Options{Deterministic: true}, Options{ETAFactor: 2, ETAThreshold: 32, HomeStretch: -1, Workers: 1, Deterministic: true,
			WalkShare: DefaultWalkShare, WalkSlice: 16, WalkDepth: 3}},
		{Options{ETAFactor: 3, ETAThreshold: -1, HomeStretch: -1, Workers: 2, WalkShare: -1}, Options{ETAFactor: 3, ETAThreshold: -1, HomeStretch: -1, Workers: 2, WalkShare: -1}},
		{Options{ETAThreshold: 5, HomeStretch: 7, Deterministic: true, Budget: 20000, WalkShare: 0.5, WalkDepth: 2, WalkSeed: 9},
			Options{ETAFactor: 2, ETAThreshold: 5, HomeStretch: 7, Workers: 1, Deterministic: true, Budget: 20000,
				WalkShare: 0.5, WalkSlice: 200, WalkDepth: 2, WalkSeed: 9}},
		// The thesis's modes and the controls run no walks.
		{Options{Maximal: true}, Options{ETAFactor: 2, ETAThreshold: 32, HomeStretch: 60 * time.Second, Workers: 1, Maximal: true, WalkShare: -1}},
		{Options{Control: true, WalkShare: 0.5}, Options{ETAFactor: 2, ETAThreshold: 32, HomeStretch: 60 * time.Second, Workers: 1, Control: true, WalkShare: -1}},
	}
	for _, c := range cases {
		if got := c.in.WithDefaults(); got != c.want {
			t.Errorf("%+v.WithDefaults() = %+v, want %+v", c.in, got, c.want)
		}
		if got := New(c.in, nil).Opt; got != c.want {
			t.Errorf("New(%+v).Opt = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// TestNoHomeStretch: with the home stretch off, as a negative value or as
// the 0 that states stored before Options.WithDefaults hold (a run with
// the interleaving clock or --home-stretch 0), a hopeless job is
// suspended in the last minute too; a stored state keeps its 0.
func TestNoHomeStretch(t *testing.T) {
	old := seeded(t, Options{})
	old.Opt.HomeStretch = 0
	b, err := old.Encode()
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if decoded.Opt.HomeStretch != 0 {
		t.Fatalf("decoded home stretch %v, want the stored 0", decoded.Opt.HomeStretch)
	}
	for name, s := range map[string]*Sched{"negative": seeded(t, Options{HomeStretch: -1}), "stored 0": decoded} {
		s.Start(s.Jobs[3])
		if d := report(s, 3, 100, inf, 3600-30); d != Suspend {
			t.Errorf("%s: 30 s left, no home stretch: %v, want suspend", name, d)
		}
	}
}

// TestSuspendPendingRules: Algorithm 3 lines 4-9. A pending superset of
// the running job, or a pending job with a suspended subset, is no
// reason to suspend.
func TestSuspendPendingRules(t *testing.T) {
	s := seeded(t, Options{})
	for _, id := range []int{0, 1, 2} {
		s.Jobs[id].Status = Complete
	}
	lock := s.Jobs[1]
	lock.Status = Running
	// Only the maximal job {lock, unlock} is pending: a superset of {lock}.
	if d := report(s, 1, 100, inf, 0); d != Continue {
		t.Errorf("only a pending superset: %v, want continue", d)
	}
	// A pending {unlock, race} job whose subset {unlock} is suspended.
	unlock := s.Jobs[2]
	unlock.Status, unlock.ETA = Suspended, 7*3600*float64(time.Second)
	race, _ := s.Reg.Race(0x1000, "", PrioBothOrder, false)
	s.add(unlock.Set.With(race), true, "test")
	if d := report(s, 1, 101, 6*3600, 0); d != Continue {
		t.Errorf("the only pending non-superset has a suspended subset (ETA 7 h > our 6 h): %v, want continue", d)
	}
	// Remove that subset: the pending {unlock, race} is better now.
	unlock.Status = Complete
	if d := report(s, 1, 102, 6*3600, 0); d != Suspend {
		t.Errorf("a pending job with no suspended subset: %v, want suspend", d)
	}
}

// TestETAInversion: Algorithm 3 lines 10-17.
func TestETAInversion(t *testing.T) {
	s := seeded(t, Options{})
	for _, j := range s.Jobs[:3] {
		j.Status = Complete
	}
	max := s.Jobs[3]
	r, _ := s.Reg.Race(0x1000, "", PrioBothOrder, false)
	// A suspended job that is not a superset of the running one and has a
	// lower ETA: switch to it.
	other := s.add(Of(r), false, "small")
	other.Status, other.ETA = Suspended, float64(3*time.Hour)
	s.Start(max)
	if d := report(s, 3, 100, 4*3600, 0); d != Suspend {
		t.Errorf("suspended job with a lower ETA: %v, want suspend", d)
	}
	if d := report(s, 3, 101, 2.5*3600, 0); d != Continue {
		t.Errorf("suspended job with a higher ETA: %v, want continue", d)
	}
	// A suspended superset of the running job is never the better job,
	// even with a lower ETA (lines 11: PPSet(j0) ⊄ PPSet(jS)).
	other.Set = max.Set.With(r)
	if d := report(s, 3, 102, 4*3600, 0); d != Continue {
		t.Errorf("only a suspended superset: %v, want continue", d)
	}
	// A suspended job with a suspended subset is not run first (lines
	// 12-13): {lock, race} at 3 h has the suspended subset {lock} at 9 h.
	sub := s.Jobs[1]
	other.Set = sub.Set.With(r)
	sub.Status, sub.ETA = Suspended, float64(9*time.Hour)
	if d := report(s, 3, 103, 4*3600, 0); d != Continue {
		t.Errorf("the lower-ETA job has a suspended subset: %v, want continue", d)
	}
}

// TestEmptySetHoldsNothingBack: the { } seed is a subset of every job, so
// under the subset rule it would hold back the whole run; it holds back
// none. (With one worker, the rule let htm1(3,4)'s { } seed keep the
// worker until the budget ran out, and the race jobs that find its bug
// were never made.)
func TestEmptySetHoldsNothingBack(t *testing.T) {
	s := seeded(t, Options{})
	empty, lock := s.Jobs[0], s.Jobs[1]
	// Running, { } finds the pending {lock} better once its ETA is
	// too long (line 6 skips only a job's supersets, and every job is
	// one of the empty set's).
	s.Start(empty)
	if d := report(s, 0, 100, 4*3600, 0); d != Suspend {
		t.Errorf("{ } over budget with {lock} pending: %v, want suspend", d)
	}
	s.Suspended(empty)
	// Suspended, it holds back no pending job.
	if j := s.Next(); j != lock {
		t.Fatalf("Next = %v, want the pending {lock}", j)
	}
	// A non-empty suspended subset still does.
	s.Start(lock)
	if d := report(s, 1, 100, 4*3600, 0); d != Suspend {
		t.Fatalf("{lock} over budget: %v, want suspend", d)
	}
	s.Suspended(lock)
	if j := s.Next(); j != s.Jobs[2] {
		t.Errorf("Next = %v, want {unlock}, the pending job that contains no suspended set", j)
	}
}

// TestNext: pending jobs come before suspended ones, except those with a
// suspended subset; among suspended jobs, the lowest ETA without a
// suspended subset.
func TestNext(t *testing.T) {
	s := seeded(t, Options{})
	s.Jobs[0].Status = Complete
	lock, unlock, max := s.Jobs[1], s.Jobs[2], s.Jobs[3]
	lock.Status, lock.ETA = Suspended, 100
	if j := s.Next(); j != unlock {
		t.Fatalf("Next = %v, want the pending {unlock}", j)
	}
	unlock.Status, unlock.ETA = Suspended, 50
	// max is pending but a superset of both suspended jobs.
	if j := s.Next(); j != unlock {
		t.Fatalf("Next = %v, want {unlock}, the suspended job with the lowest ETA", j)
	}
	max.Status, max.ETA = Suspended, 10
	if j := s.Next(); j != unlock {
		t.Fatalf("Next = %v, want {unlock}: max has lower ETA but suspended subsets", j)
	}
}

// TestRaceJobs: Algorithm 2. A both-order race reported by {lock} adds a
// big and a small job per instruction; a single-order race only for the
// first access; repeats, small jobs, { }, reallocation candidates and -C
// add nothing.
func TestRaceJobs(t *testing.T) {
	s := seeded(t, Options{})
	lock := s.Jobs[1]
	s.Start(lock)
	added := s.OnRace(lock, Race{PCA: 0xa, PCB: 0xb, BothOrder: true})
	var got []string
	for _, j := range added {
		got = append(got, s.Reg.Describe(j.Set)+" "+strings.Fields(j.Origin)[0])
	}
	want := []string{"{ 'mutex_lock' 'data race at 0x0000000a' } big,", "{ 'data race at 0x0000000a' } small,",
		"{ 'mutex_lock' 'data race at 0x0000000b' } big,", "{ 'data race at 0x0000000b' } small,"}
	if !slices.Equal(got, want) {
		t.Fatalf("jobs %q, want %q", got, want)
	}
	if added[1].Reproduces || !added[0].Reproduces {
		t.Error("small jobs must not reproduce, big ones must")
	}
	if s.Reg.PPs[2].Priority != PrioBothOrder {
		t.Errorf("priority %d", s.Reg.PPs[2].Priority)
	}
	if n := len(s.OnRace(lock, Race{PCA: 0xa, PCB: 0xb, BothOrder: true})); n != 0 {
		t.Errorf("a repeated report added %d jobs", n)
	}
	// {unlock} reports the same pair: its big jobs are new, the small ones
	// exist already (and the PPs are not new).
	unlock := s.Jobs[2]
	s.Start(unlock)
	if n := len(s.OnRace(unlock, Race{PCA: 0xa, PCB: 0xb, BothOrder: true})); n != 2 {
		t.Errorf("{unlock}: %d jobs, want its 2 big jobs", n)
	}
	// Single-order: only the first access.
	added = s.OnRace(lock, Race{PCA: 0xc, PCB: 0xd})
	if len(added) != 2 || !added[0].Set.Has(4) || s.Reg.PPs[4].PC != 0xc || s.Reg.PPs[4].Priority != PrioSingleOrder {
		t.Errorf("single-order race: %d jobs, registry %v", len(added), s.Reg.PPs)
	}
	// It turns both-order later: the second access is added, and the
	// first's priority rises.
	added = s.OnRace(lock, Race{PCA: 0xc, PCB: 0xd, BothOrder: true})
	if len(added) != 2 || s.Reg.PPs[4].Priority != PrioBothOrder {
		t.Errorf("both-order now: %d jobs, registry %v", len(added), s.Reg.PPs)
	}
	for name, c := range map[string]struct {
		j *Job
		r Race
	}{
		"small job":    {s.Jobs[5], Race{PCA: 0xe, PCB: 0xf, BothOrder: true}},
		"{ } seed":     {s.Jobs[0], Race{PCA: 0xe, PCB: 0xf, BothOrder: true}},
		"reallocation": {lock, Race{PCA: 0xe, PCB: 0xf, BothOrder: true, Realloc: true}},
	} {
		if n := len(s.OnRace(c.j, c.r)); n != 0 {
			t.Errorf("%s: %d jobs", name, n)
		}
	}
	ctl := seeded(t, Options{Control: true})
	if n := len(ctl.OnRace(ctl.Jobs[0], Race{PCA: 0xa, PCB: 0xb, BothOrder: true})); n != 0 {
		t.Errorf("-C: %d jobs", n)
	}
	if len(s.Races) != 3 || !s.Races[1].BothOrder || s.Races[2].Realloc {
		t.Errorf("race notes %+v, want 3 distinct pairs, (c,d) both-order, (e,f) not only a reallocation", s.Races)
	}
}

// TestAtomicConflictJobs: an atomic conflict adds jobs as a data race
// does (both accesses when both-order, the first when single-order), is
// noted apart from the races, ranks its jobs after every data race, lock
// and unlock, and must be covered for a total verification; a data race
// at the same instruction makes its PP a data-race PP.
func TestAtomicConflictJobs(t *testing.T) {
	s := seeded(t, Options{})
	lock := s.Jobs[1]
	s.Start(lock)
	added := s.OnRace(lock, Race{PCA: 0xa, PCB: 0xb, Atomic: true})
	var got []string
	for _, j := range added {
		got = append(got, s.Reg.Describe(j.Set)+" "+strings.Fields(j.Origin)[0])
	}
	want := []string{"{ 'mutex_lock' 'atomic conflict at 0x0000000a' } big,", "{ 'atomic conflict at 0x0000000a' } small,"}
	if !slices.Equal(got, want) {
		t.Fatalf("jobs %q, want %q", got, want)
	}
	if len(s.Races) != 0 || len(s.Conflicts) != 1 || s.Reg.PPs[2].Priority != PrioAtomicSingle || !s.Reg.PPs[2].Atomic {
		t.Fatalf("races %v, conflicts %v, PP %+v", s.Races, s.Conflicts, s.Reg.PPs[2])
	}
	if added = s.OnRace(lock, Race{PCA: 0xa, PCB: 0xb, Atomic: true, BothOrder: true}); len(added) != 2 || s.Reg.PPs[2].Priority != PrioAtomicBoth {
		t.Fatalf("both-order: %d jobs, PP %+v", len(added), s.Reg.PPs[2])
	}
	// A data race on another instruction: its jobs go first (after { }),
	// and the jobs with an atomic conflict's PP go last, whatever sync PPs
	// they hold.
	s.OnRace(lock, Race{PCA: 0xc, PCB: 0xd})
	var order []string
	for _, j := range s.pending() {
		order = append(order, s.Reg.Describe(j.Set))
	}
	wantOrder := []string{"{ }", "{ 'data race at 0x0000000c' }", "{ 'mutex_lock' 'data race at 0x0000000c' }", "{ 'mutex_lock' 'mutex_unlock' }",
		"{ 'mutex_unlock' }", "{ 'atomic conflict at 0x0000000a' }", "{ 'atomic conflict at 0x0000000b' }",
		"{ 'mutex_lock' 'atomic conflict at 0x0000000a' }", "{ 'mutex_lock' 'atomic conflict at 0x0000000b' }"}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("pending\n%q, want\n%q", order, wantOrder)
	}
	// Every job completes but the uncovered conflict's: no verification.
	for _, j := range s.Jobs {
		if !j.Set.Has(3) {
			s.Start(j)
			s.Finished(j, true, "")
		}
	}
	if s.Verified() || len(s.UncoveredConflicts()) != 1 || len(s.UncoveredRaces()) != 0 ||
		!slices.Equal(s.UncoveredAtomic(), []int{3}) || len(s.Uncovered()) != 0 {
		t.Errorf("verified %v, uncovered conflicts %v, races %v, atomic PPs %v, race PPs %v",
			s.Verified(), s.UncoveredConflicts(), s.UncoveredRaces(), s.UncoveredAtomic(), s.Uncovered())
	}
	all := s.add(s.Reg.All(), true, "test")
	s.Start(all)
	s.Finished(all, true, "")
	if !s.Verified() {
		t.Error("every conflict covered and the maximal set complete: not verified")
	}
	// A data race at an atomic conflict's instruction: one PP, a race's.
	s.OnRace(lock, Race{PCA: 0xb, PCB: 0xe, BothOrder: true})
	if pp := s.Reg.PPs[3]; pp.Atomic || pp.Priority != PrioBothOrder || !slices.Equal(s.AtomicPPs(), []int{2}) {
		t.Errorf("PP at 0xb after a race there: %+v; atomic PPs %v", pp, s.AtomicPPs())
	}
	// -C: a conflict rules a total verification out, as a race does.
	ctl := seeded(t, Options{Control: true})
	ctl.Start(ctl.Jobs[0])
	ctl.OnRace(ctl.Jobs[0], Race{PCA: 0xa, PCB: 0xb, Atomic: true})
	ctl.Finished(ctl.Jobs[0], true, "")
	if ctl.Verified() || len(ctl.UncoveredConflicts()) != 1 {
		t.Errorf("-C with a conflict: verified %v, uncovered %v", ctl.Verified(), ctl.UncoveredConflicts())
	}
}

// TestBothHalves: under weak atomicity a race between a transactional and
// a plain access gets a PP at both accesses though seen in one order
// (thesis §6.2.4), with a single-order race's priority.
func TestBothHalves(t *testing.T) {
	s := seeded(t, Options{})
	lock := s.Jobs[1]
	s.Start(lock)
	added := s.OnRace(lock, Race{PCA: 0xa, PCB: 0xb, BothHalves: true})
	var pcs []uint64
	for _, j := range added {
		for _, id := range j.Set.IDs() {
			if pp := s.Reg.PPs[id]; pp.IsRace() && !slices.Contains(pcs, pp.PC) {
				pcs = append(pcs, pp.PC)
			}
		}
	}
	if len(added) != 4 || !slices.Equal(pcs, []uint64{0xa, 0xb}) {
		t.Fatalf("%d jobs over PPs %#x, want 4 over 0xa and 0xb", len(added), pcs)
	}
	for _, pp := range s.Reg.PPs[2:] {
		if pp.Priority != PrioSingleOrder {
			t.Errorf("PP %#x: priority %d, want single-order", pp.PC, pp.Priority)
		}
	}
}

// TestBugCancelsSupersets: a bug in {lock} cancels the pending, suspended
// and running supersets, spawns nothing more from them, and leaves the
// rest.
func TestBugCancelsSupersets(t *testing.T) {
	s := seeded(t, Options{})
	lock, unlock, max := s.Jobs[1], s.Jobs[2], s.Jobs[3]
	s.Start(lock)
	s.Start(max)
	big := s.OnRace(lock, Race{PCA: 0xa, PCB: 0xb})[0]
	big.Status = Suspended
	s.Finished(lock, false, "assertion failed")
	if lock.Status != BugFound || big.Status != Cancelled || unlock.Status != Pending {
		t.Errorf("statuses: lock %v, big %v, unlock %v", lock.Status, big.Status, unlock.Status)
	}
	if d := report(s, 3, 10, 1, 0); d != Stop {
		t.Errorf("the running superset: %v, want stop", d)
	}
	s.Finished(max, false, "")
	if max.Status != Cancelled || !strings.Contains(max.Note, "job 2") {
		t.Errorf("max: %v %q", max.Status, max.Note)
	}
	if n := len(s.OnRace(unlock, Race{PCA: 0x1, PCB: 0x2})); n == 0 {
		t.Error("{unlock} is no superset of {lock}: its races still spawn jobs")
	}
	for _, j := range s.Jobs {
		if j.Status == Pending && s.bugFound(j.Set) {
			t.Errorf("pending job %d is a superset of the bug", j.ID)
		}
	}
	if s.Verified() {
		t.Error("verified with a bug")
	}
}

// TestMaximalMode: Algorithm 1. A race makes a new maximal job; the old
// one stops as no longer maximal.
func TestMaximalMode(t *testing.T) {
	s := seeded(t, Options{Maximal: true})
	j0 := s.Next()
	s.Start(j0)
	added := s.OnRace(j0, Race{PCA: 0xa, PCB: 0xb, BothOrder: true})
	if len(added) != 1 || !added[0].Set.Equal(s.Reg.All()) || s.Reg.All().Len() != 4 {
		t.Fatalf("added %v; all %v", added, s.Reg.All())
	}
	if d := report(s, 0, 1, 1, 0); d != Stop {
		t.Errorf("the old maximal job: %v, want stop", d)
	}
	s.Finished(j0, false, "")
	if j0.Status != Cancelled || s.Next() != added[0] {
		t.Errorf("old job %v; next %v", j0.Status, s.Next())
	}
}

// TestLifecycleAndVerification: completing reproducing jobs marks PPs
// explored (which reorders pending jobs), the maximal job's completion is
// total verification, and races no completed job covered are listed.
func TestLifecycleAndVerification(t *testing.T) {
	s := seeded(t, Options{})
	for _, id := range []int{0, 1} {
		s.Start(s.Jobs[id])
	}
	s.OnRace(s.Jobs[1], Race{PCA: 0xa, PCB: 0xb}) // jobs 4 {lock,a}, 5 {a}
	s.Finished(s.Jobs[0], true, "")
	if s.Reg.PPs[0].Explored {
		t.Error("{ } does not reproduce: it explores nothing")
	}
	s.Finished(s.Jobs[1], true, "")
	if !s.Reg.PPs[0].Explored || s.Reg.PPs[1].Explored {
		t.Errorf("after {lock} completed: %v", s.Reg.PPs)
	}
	// {unlock} (8) vs {a} (2): the race job is more urgent.
	if j := s.Next(); j.ID != 6 {
		t.Errorf("next %d, want 6 ({a}, priority 2)", j.ID)
	}
	if got := s.Uncovered(); !slices.Equal(got, []int{2}) {
		t.Errorf("uncovered %v", got)
	}
	for _, j := range s.Jobs[2:] {
		s.Start(j)
		s.Finished(j, true, "")
	}
	if s.Verified() {
		t.Error("verified, but no job held every known PP")
	}
	// {lock, unlock, a}: the maximal set now.
	all := s.add(s.Reg.All(), true, "test")
	s.Start(all)
	s.Finished(all, true, "")
	if !s.Verified() || len(s.Uncovered()) != 0 || !s.Idle() {
		t.Errorf("verified %v, uncovered %v, idle %v", s.Verified(), s.Uncovered(), s.Idle())
	}
	// -C: a completed maximal state space with a race candidate seen is
	// no total verification (the race was never explored).
	ctl := seeded(t, Options{Control: true})
	ctl.Start(ctl.Jobs[0])
	ctl.OnRace(ctl.Jobs[0], Race{PCA: 0xa, PCB: 0xb})
	ctl.Finished(ctl.Jobs[0], true, "")
	if ctl.Verified() || len(ctl.UncoveredRaces()) != 1 {
		t.Errorf("-C with a race: verified %v, uncovered races %v", ctl.Verified(), ctl.UncoveredRaces())
	}
	ctl.Races[0].Realloc = true
	if !ctl.Verified() {
		t.Error("-C with only a reallocation candidate: not verified")
	}
	s2 := seeded(t, Options{})
	s2.Start(s2.Jobs[3])
	s2.Suspended(s2.Jobs[3])
	s2.TimeUp()
	for _, j := range s2.Jobs {
		if want := map[bool]Status{true: TimedOut, false: NotStarted}[j.Started]; j.Status != want {
			t.Errorf("job %d (started %v) after time-up: %v, want %v", j.ID, j.Started, j.Status, want)
		}
	}
	s2.Finished(s2.Jobs[3], false, "")
	if s2.Jobs[3].Status != TimedOut {
		t.Errorf("stopped without a reason: %v", s2.Jobs[3].Status)
	}
}

// TestInterrupt: a job the run's interruption stopped is no suspension:
// its count stays, and restarted it keeps its interleavings since its
// start (the ETA threshold goes on where it was).
func TestInterrupt(t *testing.T) {
	s := seeded(t, Options{})
	lock := s.Jobs[1]
	s.Start(lock)
	report(s, 1, 20, inf, 0)
	s.Interrupt(lock)
	if lock.Status != Suspended || lock.Suspensions != 0 || !lock.Interrupted {
		t.Fatalf("interrupted: %v, %d suspensions, interrupted %v", lock.Status, lock.Suspensions, lock.Interrupted)
	}
	s.Start(lock)
	if lock.SinceStart != 20 || lock.Interrupted {
		t.Errorf("restarted after the interruption: %d since its start, interrupted %v; want 20, false", lock.SinceStart, lock.Interrupted)
	}
	s.Suspended(lock)
	s.Start(lock)
	if lock.SinceStart != 0 || lock.Suspensions != 1 {
		t.Errorf("restarted after a suspension: %d since its start, %d suspensions; want 0, 1", lock.SinceStart, lock.Suspensions)
	}
}

// TestUncoveredLeavesOutBugPPs: a data-race PP whose job found a bug is
// not listed among the PPs left to inspect (the bug's report shows it;
// before, the list named the very PP of the bug); one no job completed
// or found a bug with still is.
func TestUncoveredLeavesOutBugPPs(t *testing.T) {
	s := seeded(t, Options{})
	s.Start(s.Jobs[1])
	s.OnRace(s.Jobs[1], Race{PCA: 0xa, PCB: 0xb}) // PP 2 at 0xa: jobs {lock,a}, {a}
	s.OnRace(s.Jobs[1], Race{PCA: 0xc, PCB: 0xd}) // PP 3 at 0xc
	var ja *Job
	for _, j := range s.Jobs {
		if j.Set.Len() == 1 && j.Set.Has(2) {
			ja = j
		}
	}
	if ja == nil {
		t.Fatalf("no job {a}: %v", summary(s))
	}
	s.Start(ja)
	s.Finished(ja, false, "assert")
	if got := s.Uncovered(); !slices.Equal(got, []int{3}) {
		t.Errorf("uncovered %v, want [3] (2's job found the bug)", got)
	}
	if len(s.UncoveredRaces()) != 2 {
		t.Errorf("uncovered races %v: a bug is no coverage for a verification", s.UncoveredRaces())
	}
}
