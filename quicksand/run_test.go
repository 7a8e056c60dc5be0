package quicksand

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"landslide/estimator"
)

// fakeProgram scripts what exploring a PP set finds, standing in for the
// emulator: a state space of size(set) interleavings, a race on the
// instructions 0xa/0xb reported on interleaving 2 of any job with the
// lock PP, and a bug on interleaving 10 of any set holding mutex_lock,
// 0xa and 0xb.
type fakeProgram struct {
	reg   func() *Registry
	store map[int]int    // committed progress per job (the "store")
	state []byte         // the committed scheduler state
	every int            // commit every this many interleavings
	crash int            // stop the whole run after this many interleavings in all (0: never)
	steps int            // interleavings run in all
	log   []string       // what happened, in order
	sizes map[string]int // size by set description (default 50)
	// caveat, when set, is the caveat of the jobs with mutex_unlock.
	caveat string
	// dead: a crash stopped the process (in the walks, walk_test.go);
	// the job stops too, committing nothing. onStep, when set, sees
	// every interleaving.
	dead   bool
	onStep func()
}

var errCrash = errors.New("crash")

func (p *fakeProgram) runner(s func() *Sched) Runner {
	return func(ctx context.Context, spec JobSpec, ctl Control) (*Outcome, error) {
		n := 0
		if spec.Resume {
			n = p.store[spec.ID]
		}
		desc := fmt.Sprint(spec.SyncPPs, spec.DataRacePCs)
		size := 50
		if v, ok := p.sizes[desc]; ok {
			size = v
		}
		hasLock := slices.Contains(spec.SyncPPs, "mutex_lock")
		end := func(o Outcome) *Outcome {
			if slices.Contains(spec.SyncPPs, "mutex_unlock") {
				o.Caveat = p.caveat
			}
			return &o
		}
		bug := hasLock && slices.Contains(spec.DataRacePCs, 0xa) && slices.Contains(spec.DataRacePCs, 0xb)
		p.log = append(p.log, fmt.Sprintf("start %d %s at %d", spec.ID, desc, n))
		for n < size {
			n++
			p.steps++
			var races []Race
			if n == 2 && hasLock {
				races = append(races, Race{PCA: 0xa, PCB: 0xb, BothOrder: true})
			}
			est := estimator.Estimate{Branches: n, Proportion: float64(n) / float64(size), Size: float64(size)}
			if p.onStep != nil {
				p.onStep()
			}
			dec := ctl.Step(Step{Interleavings: n, Estimate: est, Races: races})
			if p.dead {
				return nil, errCrash
			}
			if bug && n == 10 {
				p.commit(spec.ID, n, ctl.State(end(Outcome{Bug: "assertion"})))
				return end(Outcome{Bug: "assertion"}), nil
			}
			if n%p.every == 0 {
				p.commit(spec.ID, n, ctl.State(nil))
			}
			if p.crash > 0 && p.steps >= p.crash {
				return nil, errCrash
			}
			if ctx.Err() != nil { // interrupted: it commits and stops, resumable
				p.commit(spec.ID, n, ctl.State(end(Outcome{Interrupted: true})))
				return end(Outcome{Interrupted: true}), nil
			}
			if dec != Continue {
				p.commit(spec.ID, n, ctl.State(end(Outcome{})))
				return end(Outcome{}), nil
			}
		}
		p.commit(spec.ID, n, ctl.State(end(Outcome{Complete: true})))
		return end(Outcome{Complete: true}), nil
	}
}

// commit is one batch: the job's progress and the scheduler state.
func (p *fakeProgram) commit(job, n int, state []byte) {
	p.store[job] = n
	p.state = state
}

func summary(s *Sched) []string {
	var out []string
	for _, j := range s.Jobs {
		out = append(out, fmt.Sprintf("%d %s %v n=%d", j.ID, s.Reg.Describe(j.Set), j.Status, j.Interleavings))
	}
	return out
}

func fakeRun(t *testing.T, p *fakeProgram, budget int, resume []byte) (*Result, error) {
	t.Helper()
	var s *Sched
	return Run(context.Background(), Config{
		Options: Options{Budget: time.Duration(budget), HomeStretch: 5, Workers: 1, Deterministic: true},
		SyncPPs: []string{"mutex_lock", "mutex_unlock"},
		Runner:  p.runner(func() *Sched { return s }), Resume: resume,
	})
}

// TestRunDeterministic: a whole run on the fake program with the
// interleaving clock and a budget of 1000 interleavings, against a
// schedule worked out by hand from the algorithms:
//   - seeds 1 { }, 2 {lock}, 3 {unlock}, 4 {lock, unlock} (size 5000);
//   - 1 and 2 run (priorities 0 and 4; 100 interleavings); 2's race
//     (0xa, 0xb, both-order) adds 5 {lock,a} 6 {a} 7 {lock,b} 8 {b}; the
//     race PPs rank 1, so 6, 8, 5, 7 run next (the small sets first); 5
//     and 7 each add nothing but 9 {lock,a,b}; then 3 (priority 8);
//   - 4 starts at 350, adds 10 {lock,unlock,a} and 11 {lock,unlock,b}, and
//     at its 32nd interleaving (382) its ETA 4968 exceeds 2 × 618: the
//     pending 9 is no superset of it, so 4 is suspended and 9 runs;
//   - 9 finds the bug at its 10th (392) and cancels no other job;
//   - 10 and 11 are supersets of the suspended 4, so 4 resumes at 32 and
//     runs until the budget ends: 32 + 608 = 640; 10 and 11 time out.
func TestRunDeterministic(t *testing.T) {
	newProg := func() *fakeProgram {
		return &fakeProgram{store: map[int]int{}, every: 7,
			sizes: map[string]int{"[mutex_lock mutex_unlock] []": 5000}}
	}
	p := newProg()
	res, err := fakeRun(t, p, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := summary(res.Sched)
	want := []string{
		"1 { } complete n=50",
		"2 { 'mutex_lock' } complete n=50",
		"3 { 'mutex_unlock' } complete n=50",
		"4 { 'mutex_lock' 'mutex_unlock' } timed out n=640",
		"5 { 'mutex_lock' 'data race at 0x0000000a' } complete n=50",
		"6 { 'data race at 0x0000000a' } complete n=50",
		"7 { 'mutex_lock' 'data race at 0x0000000b' } complete n=50",
		"8 { 'data race at 0x0000000b' } complete n=50",
		"9 { 'mutex_lock' 'data race at 0x0000000a' 'data race at 0x0000000b' } bug n=10",
		"10 { 'mutex_lock' 'mutex_unlock' 'data race at 0x0000000a' } not started n=0",
		"11 { 'mutex_lock' 'mutex_unlock' 'data race at 0x0000000b' } not started n=0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("jobs\n%q\nwant\n%q", got, want)
	}
	wantLog := []string{"start 1 [] [] at 0", "start 2 [mutex_lock] [] at 0", "start 6 [] [10] at 0", "start 8 [] [11] at 0",
		"start 5 [mutex_lock] [10] at 0", "start 7 [mutex_lock] [11] at 0", "start 3 [mutex_unlock] [] at 0",
		"start 4 [mutex_lock mutex_unlock] [] at 0", "start 9 [mutex_lock] [10 11] at 0",
		"start 4 [mutex_lock mutex_unlock] [] at 32"}
	if !slices.Equal(p.log, wantLog) {
		t.Errorf("starts\n%q\nwant\n%q", p.log, wantLog)
	}
	if res.Sched.Verified() || len(res.Sched.Bugs()) != 1 || len(res.Sched.Uncovered()) != 0 {
		t.Errorf("verified %v, bugs %d, uncovered %v", res.Sched.Verified(), len(res.Sched.Bugs()), res.Sched.Uncovered())
	}
	p2 := newProg()
	res2, err := fakeRun(t, p2, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(summary(res2.Sched), got) || !slices.Equal(p.log, p2.log) {
		t.Error("two runs differ")
	}
}

// TestRunCrashResume: stopping the run abruptly at many points and
// resuming from the last commit gives the same final jobs as a run that
// was never interrupted.
func TestRunCrashResume(t *testing.T) {
	sizes := map[string]int{"[mutex_lock mutex_unlock] []": 5000}
	ref := &fakeProgram{store: map[int]int{}, every: 5, sizes: sizes}
	want, err := fakeRun(t, ref, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	bugs := 0
	for _, j := range want.Sched.Jobs {
		if j.Status == BugFound {
			bugs++
		}
	}
	if bugs == 0 {
		t.Fatalf("the reference run found no bug: %q", summary(want.Sched))
	}
	for _, at := range []int{3, 17, 49, 101, 150, 233, 377, 385, 390, 391, 500, 610, 999} {
		p := &fakeProgram{store: map[int]int{}, every: 5, sizes: sizes, crash: at}
		var state []byte
		var res *Result
		for tries := 0; ; tries++ {
			res, err = fakeRun(t, p, 1000, state)
			if !errors.Is(err, errCrash) {
				break
			}
			state, p.crash = p.state, p.steps+97 // crash again later
			if tries > 100 {
				t.Fatal("no end")
			}
		}
		if err != nil {
			t.Fatalf("crash at %d: %v", at, err)
		}
		if g, w := summary(res.Sched), summary(want.Sched); !reflect.DeepEqual(g, w) {
			t.Errorf("crash at %d: jobs\n%q\nwant\n%q", at, g, w)
		}
	}
}

// TestCaveatsAcrossResume: a job's caveat (Outcome.Caveat) stays with
// the job in the stored state, so a run resumed after crashes lists the
// same caveats, with the same jobs, as one that ran through: the jobs
// with mutex_unlock that ended (the fake program gives them the caveat),
// in the order of their IDs.
func TestCaveatsAcrossResume(t *testing.T) {
	sizes := map[string]int{"[mutex_lock mutex_unlock] []": 5000}
	ref := &fakeProgram{store: map[int]int{}, every: 5, sizes: sizes, caveat: "not exact"}
	want, err := fakeRun(t, ref, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []int
	for _, j := range want.Sched.Jobs {
		if j.Started && slices.Contains(j.Set.IDs(), 1) { // PP 1: mutex_unlock
			jobs = append(jobs, j.ID)
		}
	}
	if w := []Caveat{{Text: "not exact", Jobs: jobs}}; len(jobs) == 0 || !reflect.DeepEqual(want.Sched.Caveats(), w) {
		t.Fatalf("caveats %+v, want %+v", want.Sched.Caveats(), w)
	}
	for _, at := range []int{150, 377, 610} {
		p := &fakeProgram{store: map[int]int{}, every: 5, sizes: sizes, caveat: "not exact", crash: at}
		var state []byte
		res, err := fakeRun(t, p, 1000, state)
		for tries := 0; errors.Is(err, errCrash) && tries < 100; tries++ {
			state, p.crash = p.state, p.steps+97
			res, err = fakeRun(t, p, 1000, state)
		}
		if err != nil {
			t.Fatalf("crash at %d: %v", at, err)
		}
		if g, w := res.Sched.Caveats(), want.Sched.Caveats(); !reflect.DeepEqual(g, w) {
			t.Errorf("crash at %d: caveats %+v, want %+v", at, g, w)
		}
	}
}

func TestRunConfigErrors(t *testing.T) {
	ok := func(context.Context, JobSpec, Control) (*Outcome, error) { return &Outcome{Complete: true}, nil }
	for name, c := range map[string]Config{
		"negative workers":  {Options: Options{Budget: 1, Workers: -1}, Runner: ok},
		"deterministic, 2":  {Options: Options{Budget: 1, Workers: 2, Deterministic: true}, Runner: ok},
		"maximal + control": {Options: Options{Budget: 1, Maximal: true, Control: true}, Runner: ok},
		"no budget":         {Runner: ok},
	} {
		if _, err := Run(context.Background(), c); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Decode([]byte{0xc1}); err == nil {
		t.Error("garbage decodes")
	}
}

// TestRunResumeLargerBudget: a run whose budget ran out, resumed with a
// larger budget, takes up the jobs it timed out.
func TestRunResumeLargerBudget(t *testing.T) {
	sizes := map[string]int{"[mutex_lock mutex_unlock] []": 5000}
	p := &fakeProgram{store: map[int]int{}, every: 5, sizes: sizes}
	res, err := fakeRun(t, p, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	max := res.Sched.Jobs[3]
	if max.Status != TimedOut || max.Interleavings != 640 {
		t.Fatalf("the maximal job after 1000: %v, %d", max.Status, max.Interleavings)
	}
	state, _ := res.Sched.Encode()
	res, err = fakeRun(t, p, 20000, state)
	if err != nil {
		t.Fatal(err)
	}
	max = res.Sched.Jobs[3]
	if max.Status != Complete || max.Interleavings != 5000 || p.store[4] != 5000 {
		t.Errorf("the maximal job after resuming with 20000: %v, %d", max.Status, max.Interleavings)
	}
	for _, j := range res.Sched.Jobs {
		if j.Status == Pending || j.Status == Suspended || j.Status == TimedOut {
			t.Errorf("job %d still %v", j.ID, j.Status)
		}
	}
}

// TestRunCPUAcrossResume: the run's CPU time is kept in its stored state
// and a resumed run adds its own to it (a resumed run's report once gave
// only the last process's CPU time).
func TestRunCPUAcrossResume(t *testing.T) {
	p := &fakeProgram{store: map[int]int{}, every: 5, crash: 300}
	run := func(cpu time.Duration, resume []byte) *Sched {
		Run(context.Background(), Config{
			Options: Options{Budget: 100000, HomeStretch: 5, Workers: 1, Deterministic: true},
			SyncPPs: []string{"mutex_lock", "mutex_unlock"},
			Runner:  p.runner(nil), Resume: resume, CPU: func() time.Duration { return cpu },
		})
		s, err := Decode(p.state)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := run(2*time.Second, nil); s.CPU != 2*time.Second {
		t.Fatalf("after the first process: CPU %v, want 2s", s.CPU)
	}
	p.crash, p.steps = 0, 0
	if s := run(3*time.Second, p.state); s.CPU != 5*time.Second {
		t.Fatalf("after the resumed process: CPU %v, want 2s + 3s", s.CPU)
	}
}

// TestTimeUpFirstBug: when the first bug ends a FirstBug run with budget
// left, the jobs that never started say so and do not time out; when the
// budget is spent they time out.
func TestTimeUpFirstBug(t *testing.T) {
	for _, spent := range []bool{false, true} {
		s := New(Options{Budget: time.Hour, FirstBug: true}, []string{"mutex_lock", "mutex_unlock"})
		s.Jobs[0].Status, s.Jobs[1].Status, s.Jobs[2].Status = BugFound, Suspended, Pending
		s.Now = time.Minute
		if spent {
			s.Now = time.Hour
		}
		s.TimeUp()
		want := []Status{NotStarted, Cancelled}
		if spent {
			want = []Status{NotStarted, TimedOut} // the pending job never started
		}
		if s.Jobs[2].Status != want[0] || s.Jobs[1].Status != want[1] {
			t.Errorf("budget spent %v: pending %v, suspended %v; want %v", spent, s.Jobs[2].Status, s.Jobs[1].Status, want)
		}
	}
}
