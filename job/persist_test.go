package job

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"landslide/dpor"
	"landslide/estimator"
	"landslide/kernel"
	"landslide/linearize"
	"landslide/record"
	"landslide/store"
)

// storedRun records a new run of cfg in st, as the CLI does.
func storedRun(t *testing.T, st *store.Store, cfg Config) *store.Run {
	t.Helper()
	spec, err := EncodeSpec(cfg.Spec)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := st.PutBinary(cfg.Image)
	if err != nil {
		t.Fatal(err)
	}
	run := &store.Run{Command: "explore", Program: cfg.Program, Binary: bin, Spec: spec, Status: store.StatusRunning}
	if err := st.NewRun(run); err != nil {
		t.Fatal(err)
	}
	return run
}

func raceSummary(res *Result) []string {
	var out []string
	for _, r := range res.Races {
		out = append(out, fmt.Sprintf("%+v %v %v", *r.Candidate, r.StackA, r.StackB))
	}
	return out
}

// TestResumeFromStore: a job stopped by interleaving limits and resumed
// from the store each time (from its frontier, race analysis and
// checkpoints, in a fresh machine) ends exactly as an uninterrupted job:
// the same interleavings, verification, race candidates (with stacks) and
// bug, with the same trace.
func TestResumeFromStore(t *testing.T) {
	cases := []struct {
		name  string
		cfg   Config
		stops []int
	}{
		{"ref/mutex_test", Config{Spec: Spec{Kernel: kernel.Config{SyncPPs: []string{"mutex_lock", "mutex_unlock"}}, TestingMutexes: true}}, []int{1, 300, 301, 1000, 2000}},
		{"sem_if/paradise_lost", Config{Spec: Spec{Spec: dpor.Spec{Strategy: "icb"}}}, []int{50, 200, 420}},
		{"ref/broadcast_test", Config{Spec: Spec{Kernel: kernel.Config{Filters: thesisFilters}, Spec: dpor.Spec{NoSleepSets: true}}}, []int{10, 90}},
		// Transactional memory: injected aborts, their tags and retry
		// sets are part of the frontier.
		{"htm/htm2", Config{Spec: Spec{Kernel: kernel.Config{Args: []string{"htm2", "2", "2"}}, Spec: dpor.Spec{RetrySets: true}}}, []int{1, 40, 41, 150}},
		{"htm/htm2", Config{Spec: Spec{Kernel: kernel.Config{Args: []string{"htm2", "3", "1"}}, Spec: dpor.Spec{AbortCodes: true}}}, []int{7, 100, 400}},
	}
	for _, c := range cases {
		f, img := image(t, c.name)
		c.cfg.Program, c.cfg.Image = f.Path(), img
		want, err := Run(context.Background(), c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(t.TempDir(), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		run := storedRun(t, st, c.cfg)
		var got *Result
		commits := 0
		for i := 0; i <= len(c.stops); i++ {
			cfg := c.cfg
			cfg.MaxInterleavings = 0
			if i < len(c.stops) {
				cfg.MaxInterleavings = c.stops[i]
			}
			cfg.Persist = &Persist{Store: st, Run: run, Resume: i > 0, Every: 37, CheckpointEvery: 8,
				OnCommit: func(store.CommitStats) { commits++ }}
			if got, err = Run(context.Background(), cfg); err != nil {
				t.Fatalf("%s, part %d: %v", c.name, i, err)
			}
			if got.Bug != nil {
				break
			}
		}
		if got.Interleavings != want.Interleavings || got.Executed != want.Executed || got.Transitions != want.Transitions ||
			got.Verified != want.Verified || got.Complete != want.Complete {
			t.Errorf("%s: resumed %d/%d interleavings (verified %v), uninterrupted %d/%d (verified %v)", c.name,
				got.Interleavings, got.Executed, got.Verified, want.Interleavings, want.Executed, want.Verified)
		}
		if !slices.Equal(raceSummary(got), raceSummary(want)) {
			t.Errorf("%s: race candidates differ:\nresumed %v\nuninterrupted %v", c.name, raceSummary(got), raceSummary(want))
		}
		if (got.Bug == nil) != (want.Bug == nil) || got.Bug != nil &&
			record.Hash(got.BugBranch.Transitions) != record.Hash(want.BugBranch.Transitions) {
			t.Errorf("%s: bug %v, uninterrupted %v", c.name, got.Bug, want.Bug)
		}
		jb, err := st.Job(run.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if jb.Executed != want.Executed || jb.Commits != commits || commits < len(c.stops)+1 {
			t.Errorf("%s: stored job %+v after %d commits", c.name, jb, commits)
		}
		st.Close()
	}
}

// TestResumeRefusesEarlierSemantics: a stored job of a TM program that an
// earlier revision of the machine explored (kernel.Semantics 0; its
// aborted transactions had no reads) is refused, not continued, and so is
// any job of revision 1 (exits and spin loops were modelled otherwise);
// the current revision's is continued. Likewise a linearizability job
// whose interleavings an earlier revision of the check judged
// (linearize.Revision; it missed violations), and no other job for that
// revision.
func TestResumeRefusesEarlierSemantics(t *testing.T) {
	for _, c := range []struct {
		name      string
		args      []string
		lineup    bool
		semantics int
		revision  int
		stale     bool
	}{
		{"htm/htm2", []string{"htm2", "2", "1"}, false, 0, linearize.Revision, true},
		{"htm/htm2", []string{"htm2", "2", "1"}, false, kernel.Semantics, linearize.Revision, false},
		{"ref/mutex_test", nil, false, 1, 0, true},
		{"ref/mutex_test", nil, false, kernel.Semantics, 0, false},
		{"posix/lineup_counter", []string{"prog", "0"}, true, kernel.Semantics, 0, true},
		{"posix/lineup_counter", []string{"prog", "0"}, true, kernel.Semantics, linearize.Revision, false},
	} {
		f, img := image(t, c.name)
		spec := Spec{Program: f.Path(), Kernel: kernel.Config{Args: c.args}}
		if c.lineup {
			spec.Kernel.EveryAccess, spec.Linearizability = true, true
		}
		cfg := Config{Spec: spec, Image: img}
		st, err := store.Open(t.TempDir(), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		run := storedRun(t, st, cfg)
		first := cfg
		first.MaxInterleavings = 3
		first.Persist = &Persist{Store: st, Run: run}
		if _, err := Run(context.Background(), first); err != nil {
			t.Fatal(err)
		}
		jb, err := st.Job(run.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if jb.Semantics != kernel.Semantics || jb.Lineup != linearize.Revision {
			t.Errorf("%s: stored semantics %d and check revision %d, want %d and %d", c.name, jb.Semantics, jb.Lineup, kernel.Semantics, linearize.Revision)
		}
		jb.Semantics, jb.Lineup = c.semantics, c.revision
		if err := st.Commit(&store.Commit{Job: jb}); err != nil {
			t.Fatal(err)
		}
		again := cfg
		again.Persist = &Persist{Store: st, Run: run, Resume: true}
		res, err := Run(context.Background(), again)
		switch {
		case c.stale && !errors.Is(err, ErrStale):
			t.Errorf("%s, semantics %d, check revision %d: resumed (%v), want ErrStale", c.name, c.semantics, c.revision, err)
		case !c.stale && (err != nil || !res.Complete):
			t.Errorf("%s, semantics %d, check revision %d: %v, want a completed resume", c.name, c.semantics, c.revision, err)
		}
		st.Close()
	}
}

// TestStatusCaveat: a verified job whose strategy may not have explored
// every trace says so in its stored message; one without a caveat does
// not, nor does a bug (which stands whatever was left out).
func TestStatusCaveat(t *testing.T) {
	const caveat = "optimal DPOR is not exact on programs with transactions"
	for _, c := range []struct {
		r    *Result
		want string
	}{
		{&Result{Result: &dpor.Result{Interleavings: 9, Complete: true, Caveat: caveat}, Verified: true}, "verified: 9 interleavings; caveat: " + caveat},
		{&Result{Result: &dpor.Result{Interleavings: 9, Complete: true}, Verified: true}, "verified: 9 interleavings"},
		{&Result{Result: &dpor.Result{Interleavings: 9, Bug: &record.Bug{Kind: record.BugAssert, Message: "x"}, Caveat: caveat}}, record.BugAssert.String() + ": x"},
	} {
		if st, msg := c.r.Status(); msg != c.want {
			t.Errorf("%s %q, want %q", st, msg, c.want)
		}
	}
}

// TestEstimatorStateBeforeModel: a frontier stored before the sibling
// model was reworked (its evidence then RestActual, RestPred, RestNodes;
// its nodes' First and PredRest) still decodes: the old fields are
// ignored, the model starts over from what the resumed run finishes, and
// the thesis's sums, which Quicksand schedules on, are kept.
func TestEstimatorStateBeforeModel(t *testing.T) {
	old := map[string]any{
		"Nodes": []map[string]any{{"Usecs": 1.5, "Marked": 3, "DoneN": 1, "DoneProp": 0.5, "DoneTime": 2.5,
			"DonePropK": 0.5, "DoneTimeK": 2.0, "First": 2.5, "PredRest": 5.0}},
		"Branches": 7, "Elapsed": int64(time.Second), "RestActual": 1.5, "RestPred": 2.0, "RestNodes": 20,
	}
	raw, err := msgpack.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	var st estimator.State
	if err := msgpack.Unmarshal(raw, &st); err != nil {
		t.Fatalf("an estimator state stored before the sibling model's rework: %v", err)
	}
	if st.Branches != 7 || len(st.Nodes) != 1 || st.Nodes[0].DoneTime != 2.5 || st.Nodes[0].DoneN != 1 || st.Second.N != 0 {
		t.Errorf("decoded %+v", st)
	}
}

// TestCutJobResumes: a stored job whose time budget runs out inside an
// execution stops there (Result.Cut) instead of running the execution to
// its end, and the store keeps its last commit: a resume explores on from
// there, the cut execution again, and ends exactly as an uninterrupted
// job (every interleaving, none out of budget, verified, the same race
// candidates). Stored as an execution out of budget instead, the cut one
// would never be explored and the resumed job could not be verified.
// late_write(200) under every-access PPs: executions of about 200 steps,
// with the budget asked every 32 (dpor.ExpiredEvery lowered); the clock
// counts its own calls, so where the budget runs out is deterministic.
func TestCutJobResumes(t *testing.T) {
	defer func(e int) { dpor.ExpiredEvery = e }(dpor.ExpiredEvery)
	dpor.ExpiredEvery = 32
	f, img := image(t, "posix/late_write")
	base := Config{Image: img, Spec: Spec{Kernel: kernel.Config{Args: []string{"late_write", "200"}, EveryAccess: true}}}
	base.Program = f.Path()
	ticks := 0
	clock := func() time.Duration { ticks++; return time.Duration(ticks) * time.Microsecond }
	cfg := base
	cfg.Now = clock
	want, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !want.Verified || want.Executed < 100 {
		t.Fatalf("uninterrupted: verified %v after %d executions", want.Verified, want.Executed)
	}
	full := ticks

	// A budget from half the run's clock on that runs out inside an
	// execution (most run out at an execution's end: the clock ticks
	// there too), each tried in a store of its own.
	var st *store.Store
	var run *store.Run
	var cut *Result
	for b := full / 2; cut == nil || !cut.Cut; b += 7 {
		if b >= full {
			t.Fatalf("no budget from %d to %d ticks runs out inside an execution", full/2, full)
		}
		if st != nil {
			st.Close()
		}
		if st, err = store.Open(t.TempDir(), store.Options{}); err != nil {
			t.Fatal(err)
		}
		run = storedRun(t, st, base)
		ticks = 0
		cfg = base
		cfg.Now, cfg.Budget = clock, time.Duration(b)*time.Microsecond
		cfg.Persist = &Persist{Store: st, Run: run, Every: 25, Interval: time.Hour}
		if cut, err = Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		if cut.Stopped != dpor.StopBudget || cut.Budgeted != 0 || cut.Executed >= want.Executed {
			t.Fatalf("budget %d of %d ticks: cut %v, stopped %q, %d budgeted, %d of %d executions", b, full,
				cut.Cut, cut.Stopped, cut.Budgeted, cut.Executed, want.Executed)
		}
	}
	defer st.Close()
	jb, err := st.Job(run.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if jb.Status != store.StatusBudget || jb.Executed > cut.Executed || jb.Executed < 25 || jb.Executed%25 != 0 || jb.Budgeted != 0 {
		t.Fatalf("stored job after the cut: %+v (the cut run had %d executions)", jb, cut.Executed)
	}

	// Resumed with small budgets until one cuts the resumed job before
	// its first commit: its record must keep the stored counters (the
	// run it resumes committed them), not start from zero.
	for b := 5; ; b += 5 {
		if b > 2000 {
			t.Fatal("no small budget cut the resumed job")
		}
		before, err := st.Job(run.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		ticks = 0
		cfg = base
		cfg.Now, cfg.Budget = clock, time.Duration(b)*time.Microsecond
		commits := 0
		cfg.Persist = &Persist{Store: st, Run: run, Resume: true, Every: 25, Interval: time.Hour,
			OnCommit: func(store.CommitStats) { commits++ }}
		again, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Cut || commits != 1 {
			continue // ended between executions, or committed on the way
		}
		after, err := st.Job(run.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if after.Executed != before.Executed || after.Interleavings != before.Interleavings || after.Executed == 0 {
			t.Fatalf("a resumed job cut before its first commit stored %+v; before it %+v", after, before)
		}
		break
	}

	cfg = base
	cfg.Persist = &Persist{Store: st, Run: run, Resume: true, Every: 25, Interval: time.Hour}
	got, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got.Cut || got.Budgeted != 0 || !got.Verified || got.Executed != want.Executed || got.Interleavings != want.Interleavings ||
		got.Transitions != want.Transitions {
		t.Errorf("resumed: cut %v, %d budgeted, verified %v, %d/%d executions, %d transitions; uninterrupted %d/%d, %d",
			got.Cut, got.Budgeted, got.Verified, got.Interleavings, got.Executed, got.Transitions,
			want.Interleavings, want.Executed, want.Transitions)
	}
	if !slices.Equal(raceSummary(got), raceSummary(want)) {
		t.Errorf("race candidates differ:\nresumed %v\nuninterrupted %v", raceSummary(got), raceSummary(want))
	}
}

// TestInterruptCutsStoredJob: an interrupt (the context canceled) inside
// a long execution stops a stored job there too, with the store at its
// last commit (status stopped), and a resume ends as an uninterrupted job.
// Without the cut, the job would finish the execution first: minutes, on
// an execution of millions of steps.
func TestInterruptCutsStoredJob(t *testing.T) {
	defer func(e int) { dpor.ExpiredEvery = e }(dpor.ExpiredEvery)
	dpor.ExpiredEvery = 32
	f, img := image(t, "posix/late_write")
	base := Config{Image: img, Spec: Spec{Kernel: kernel.Config{Args: []string{"late_write", "200"}, EveryAccess: true}}}
	base.Program = f.Path()
	want, err := Run(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	// The clock cancels the context at its at-th call, from the 1,000th
	// on until that falls inside an execution (the clock ticks at every
	// step, and at each execution's end), each try in a store of its own.
	var st *store.Store
	var run *store.Run
	var cut *Result
	for at := 1000; cut == nil || !cut.Cut; at += 7 {
		if at > 5000 {
			t.Fatal("no interrupt from the 1,000th to the 5,000th tick fell inside an execution")
		}
		if st != nil {
			st.Close()
		}
		if st, err = store.Open(t.TempDir(), store.Options{}); err != nil {
			t.Fatal(err)
		}
		run = storedRun(t, st, base)
		ctx, cancel := context.WithCancel(context.Background())
		ticks := 0
		cfg := base
		cfg.Now = func() time.Duration {
			if ticks++; ticks == at {
				cancel()
			}
			return time.Duration(ticks) * time.Microsecond
		}
		cfg.Persist = &Persist{Store: st, Run: run, Every: 5, Interval: time.Hour}
		cut, err = Run(ctx, cfg)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if cut.Stopped != dpor.StopCanceled || cut.Budgeted != 0 {
			t.Fatalf("interrupted at tick %d: cut %v, stopped %q, %d budgeted after %d executions", at, cut.Cut, cut.Stopped, cut.Budgeted, cut.Executed)
		}
	}
	defer st.Close()
	if jb, err := st.Job(run.ID, 1); err != nil || jb.Status != store.StatusStopped || jb.Executed > cut.Executed {
		t.Fatalf("stored job after the interrupt: %+v, %v", jb, err)
	}
	cfg := base
	cfg.Persist = &Persist{Store: st, Run: run, Resume: true, Every: 5, Interval: time.Hour}
	got, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got.Cut || !got.Verified || got.Executed != want.Executed || got.Transitions != want.Transitions {
		t.Errorf("resumed: cut %v, verified %v, %d executions, %d transitions; uninterrupted %d, %d",
			got.Cut, got.Verified, got.Executed, got.Transitions, want.Executed, want.Transitions)
	}
}
