package quicksand

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// walkProgram is fakeProgram with walks: a PCT slice's walk 5 finds a
// bug when the slice's seed is bugSeed and its PP set holds 0xa and 0xb
// (the fake program's race); every other walk finds nothing. A reversal
// slice has revCands candidates after its base walk, whatever the PP set:
// walk n runs candidate Seed+n-2, and the slice ends after the last.
// Each walk counts as an interleaving for crashes (crash) and for the
// interruption (cancelAt: the run's context is canceled after that many).
type walkProgram struct {
	*fakeProgram
	bugSeed  uint64
	revCands int
	specs    []WalkSpec
	walks    []int // per slice, the walks run
	cancelAt int
	cancel   context.CancelFunc
}

func (p *walkProgram) walker() Walker {
	return func(ctx context.Context, spec WalkSpec, ctl WalkControl) (int, error) {
		p.specs = append(p.specs, spec)
		p.walks = append(p.walks, 0)
		rev := spec.Kind == WalkReversal
		bug := !rev && spec.Seed == p.bugSeed && slices.Contains(spec.DataRacePCs, 0xa) && slices.Contains(spec.DataRacePCs, 0xb)
		for n := 1; ; n++ {
			p.walks[len(p.walks)-1] = n
			p.steps++
			if p.crash > 0 && p.steps >= p.crash {
				p.dead = true // killed: nothing more is committed
				return n, errCrash
			}
			keep := ctl.Walk(n)
			p.onStep()
			if bug && n == 5 {
				_, p.state = ctl.Bug(n, "walk bug") // committed with its state
				return n, nil
			}
			if rev && uint64(n-1) >= uint64(p.revCands)-spec.Seed {
				ctl.Exhausted()
				return n, nil
			}
			if !keep || ctx.Err() != nil {
				return n, nil
			}
		}
	}
}

func (p *walkProgram) run(t *testing.T, budget int, resume []byte) (*Result, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p.cancel = cancel
	p.dead = false
	p.onStep = func() {
		if p.cancelAt > 0 && p.steps == p.cancelAt {
			p.cancel()
		}
	}
	return Run(ctx, Config{
		Options: Options{Budget: time.Duration(budget), HomeStretch: 5, Workers: 1, Deterministic: true},
		SyncPPs: []string{"mutex_lock", "mutex_unlock"},
		Runner:  p.runner(nil), Walker: p.walker(), Resume: resume,
	})
}

func newWalkProgram() *walkProgram {
	return &walkProgram{fakeProgram: &fakeProgram{store: map[int]int{}, every: 5,
		sizes: map[string]int{"[mutex_lock mutex_unlock] []": 5000}}, bugSeed: 2, revCands: 20}
}

// walkSummary is summary with the walks' figures and each job's origin.
func walkSummary(s *Sched) []string {
	out := summary(s)
	for i, j := range s.Jobs {
		out[i] += " " + j.Origin
	}
	w := s.Walks
	return append(out, fmt.Sprintf("walks: %d slices, %d walks, share %d, now %d, due %v; %d PCT, reversal %d done %v over %s",
		w.Slices, w.Walks, w.Share, s.Now, w.Due, w.PCT, w.Reversal, w.ReversalDone, w.ReversalPPs))
}

// TestWalks: with the interleaving clock, the walks take at most their
// share (one eighth) of the interleavings, in slices of 16 walks (a
// hundredth of the budget, at least 16) over every PP known: reversal
// slices first and every other one, each from the candidate where the
// last one over the same PP set stopped (from the first over a new set),
// until the candidates run out; PCT slices the others, with seeds 0, 1,
// 2, .... PCT's third slice (seed 2) has the race's PPs and finds the
// bug at its walk 5, which becomes a job of the run (status bug, with
// the walk's slice, seed and depth) without counting as a verification;
// a second run does exactly the same.
func TestWalks(t *testing.T) {
	p := newWalkProgram()
	res, err := p.run(t, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Sched
	w := s.Walks
	if w.Slices < 3 || w.Walks != int(w.Share) || float64(w.Share) > DefaultWalkShare*float64(s.Now) || s.Now != 1000 {
		t.Errorf("walks %+v over %d interleavings: want at least 3 slices, within an eighth", w, s.Now)
	}
	var pct, bugSlice int
	var next uint64      // the next reversal candidate
	var done bool        // the reversal candidates ran out
	var lastPCs []uint64 // the last reversal slice's PP set
	for k, spec := range p.specs {
		if spec.Slice != k+1 || !slices.Equal(spec.SyncPPs, []string{"mutex_lock", "mutex_unlock"}) {
			t.Errorf("slice %d: %+v", k+1, spec)
		}
		if !slices.Equal(spec.DataRacePCs, lastPCs) {
			next, done = 0, false
		}
		switch {
		case !done && k%2 == 0:
			if spec.Kind != WalkReversal || spec.Seed != next || spec.Depth != 0 {
				t.Errorf("slice %d: %+v, want reversal walks from candidate %d", k+1, spec, next)
			}
			next += uint64(p.walks[k] - 1)
			done = next >= uint64(p.revCands)
			lastPCs = spec.DataRacePCs
		default:
			if spec.Kind != WalkPCT || spec.Seed != uint64(pct) || spec.Depth != 3 {
				t.Errorf("slice %d: %+v, want PCT seed %d", k+1, spec, pct)
			}
			if pct == 2 {
				bugSlice = k + 1
				if !slices.Equal(spec.DataRacePCs, []uint64{0xa, 0xb}) {
					t.Errorf("slice %d's PCs %#x, want the race's", k+1, spec.DataRacePCs)
				}
			}
			pct++
		}
	}
	if !done || pct < 3 {
		t.Errorf("reversal candidates done %v, %d PCT slices: want done, and at least 3", done, pct)
	}
	var walk *Job
	for _, j := range s.Jobs {
		if j.Walk != nil {
			if walk != nil {
				t.Fatalf("two walk jobs: %q", walkSummary(s))
			}
			walk = j
		}
	}
	if walk == nil || walk.Status != BugFound || walk.Bug != "walk bug" || walk.Walk.Slice != bugSlice || walk.Walk.Seed != 2 ||
		walk.Walk.Walk != 5 || walk.Walk.Depth != 3 || !walk.Set.Equal(s.Reg.All()) || walk.FoundAt == 0 {
		t.Fatalf("walk job %+v", walk)
	}
	if !strings.HasPrefix(walk.Origin, fmt.Sprintf("PCT walk 5 of slice %d (seed 2", bugSlice)) || s.JobPPs(walk) != s.Reg.Describe(walk.Set) {
		t.Errorf("walk job: origin %q, PPs %s", walk.Origin, s.JobPPs(walk))
	}
	if s.Verified() || s.Maximal() == walk {
		t.Error("a walk counts towards a verification")
	}
	p2 := newWalkProgram()
	res2, err := p2.run(t, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := walkSummary(res2.Sched), walkSummary(s); !reflect.DeepEqual(g, w) || !reflect.DeepEqual(p.specs, p2.specs) {
		t.Errorf("two runs differ:\n%q\n%q", g, w)
	}
	// Off: no walk at all.
	p3 := newWalkProgram()
	res3, err := Run(context.Background(), Config{
		Options: Options{Budget: 1000, HomeStretch: 5, Workers: 1, Deterministic: true, WalkShare: -1},
		SyncPPs: []string{"mutex_lock", "mutex_unlock"}, Runner: p3.runner(nil), Walker: p3.walker(),
	})
	if err != nil || len(p3.specs) != 0 || res3.Sched.Walks.Slices != 0 {
		t.Errorf("walks off: %v, %d slices", err, len(p3.specs))
	}
}

// TestWalksCrashResume: stopping the run abruptly anywhere, in the jobs
// or in the walks, and resuming from the last commit (a job's, or the
// walk's bug's) ends as the run that went through: the same jobs, walk
// job included, and the same walks.
func TestWalksCrashResume(t *testing.T) {
	ref := newWalkProgram()
	want, err := ref.run(t, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	inWalks := 0
	for _, at := range []int{3, 130, 160, 161, 170, 190, 233, 300, 377, 500, 610, 999} {
		p := newWalkProgram()
		p.crash = at
		var state []byte
		var res *Result
		for tries := 0; ; tries++ {
			res, err = p.run(t, 1000, state)
			if !errors.Is(err, errCrash) {
				break
			}
			if p.dead {
				inWalks++
			}
			state, p.crash = p.state, p.steps+97
			if tries > 100 {
				t.Fatal("no end")
			}
		}
		if err != nil {
			t.Fatalf("crash at %d: %v", at, err)
		}
		if g, w := walkSummary(res.Sched), walkSummary(want.Sched); !reflect.DeepEqual(g, w) {
			t.Errorf("crash at %d: jobs\n%q\nwant\n%q", at, g, w)
		}
	}
	if inWalks < 3 {
		t.Errorf("only %d crashes fell in the walks", inWalks)
	}
}

// TestWalksInterrupted: an interruption (the context canceled) in the
// middle of a slice undoes the slice and marks it due; the resumed run
// runs it first, then the job that was running, and ends as the run that
// went through. An interruption in a job leaves no slice due.
func TestWalksInterrupted(t *testing.T) {
	ref := newWalkProgram()
	want, err := ref.run(t, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	due := 0
	for _, at := range []int{50, 140, 150, 300, 420, 700} {
		p := newWalkProgram()
		p.cancelAt = at
		res, err := p.run(t, 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Interrupted {
			t.Fatalf("interrupted at %d: the run went through", at)
		}
		if res.Sched.Walks.Due {
			due++
		}
		state, err := res.Sched.Encode()
		if err != nil {
			t.Fatal(err)
		}
		p.cancelAt = 0
		res, err = p.run(t, 1000, state)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := walkSummary(res.Sched), walkSummary(want.Sched); !reflect.DeepEqual(g, w) {
			t.Errorf("interrupted at %d: jobs\n%q\nwant\n%q", at, g, w)
		}
	}
	if due == 0 {
		t.Error("no interruption fell in a slice: the due slice is not tested")
	}
}
