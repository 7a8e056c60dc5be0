package replay

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"landslide/dpor"
	"landslide/fixtures"
	"landslide/job"
	"landslide/kernel"
	"landslide/race"
	"landslide/record"
	"landslide/store"
)

// thesisFilters: no PPs inside thr_create/thr_exit/thr_join (thesis §4.5).
var thesisFilters = []kernel.Filter{{Func: "thr_create"}, {Func: "thr_exit"}, {Func: "thr_join"}}

// explore runs cfg on fixture name with persistence into st and returns
// the stored run and the job's result.
func explore(t *testing.T, st *store.Store, name string, cfg job.Config, p job.Persist) (*store.Run, *job.Result) {
	t.Helper()
	f, img, err := fixtures.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Program, cfg.Image = f.Path(), img
	spec, err := job.EncodeSpec(cfg.Spec)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := st.PutBinary(img)
	if err != nil {
		t.Fatal(err)
	}
	run := &store.Run{Command: "explore", Program: f.Path(), Binary: bin, Spec: spec, Status: store.StatusRunning}
	if err := st.NewRun(run); err != nil {
		t.Fatal(err)
	}
	p.Store, p.Run = st, run
	cfg.Persist = &p
	res, err := job.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return run, res
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestBugsReplay: every bug found on the fixtures (the seeded-bug
// libraries with their test programs, fig1 and the small buggy programs)
// replays from the store to the identical failure, and replaying from a
// checkpoint and from the program's start gives the same transitions.
func TestBugsReplay(t *testing.T) {
	st := openStore(t)
	fromCheckpoint := 0
	n := 0
	for _, f := range fixtures.All() {
		if f.Expect == "ok" || f.NoLibc || strings.HasPrefix(f.Name, "bugs/") {
			continue
		}
		img, err := os.ReadFile(f.Path())
		if err != nil {
			t.Fatal(err)
		}
		pcs, err := kernel.MemoryPCs(img, f.RacePPFuncs)
		if err != nil {
			t.Fatal(err)
		}
		run, res := explore(t, st, f.Name, job.Config{Spec: job.Spec{Kernel: kernel.Config{DataRacePCs: pcs}, Spec: dpor.Spec{Strategy: "icb", MaxInterleavings: 50000}}},
			job.Persist{CheckpointEvery: 4})
		if res.Bug == nil {
			t.Errorf("%s: no bug found", f.Name)
			continue
		}
		n++
		tr, err := st.Trace(run.ID, 1, 1)
		if err != nil {
			t.Fatalf("%s: the bug's trace is not stored: %v", f.Name, err)
		}
		var hashes [2][32]byte
		for i, fromStart := range []bool{false, true} {
			steps := 0
			rp, err := Trace(st, run, tr, Options{FromStart: fromStart, Step: func(int, *record.Transition) { steps++ }})
			if err != nil {
				t.Fatalf("%s (from start %v): %v", f.Name, fromStart, err)
			}
			if rp.Bug == nil || rp.Bug.Kind != res.Bug.Kind || rp.Bug.PC != res.Bug.PC || rp.Bug.Message != res.Bug.Message || rp.Bug.Thread != res.Bug.Thread {
				t.Errorf("%s: replay ends with %v, the exploration found %v", f.Name, rp.Bug, res.Bug)
			}
			if fromStart && rp.From != 0 || steps != len(tr.Choices)-rp.From {
				t.Errorf("%s: replay from %d re-executed %d of %d transitions", f.Name, rp.From, steps, len(tr.Choices))
			}
			if !fromStart && rp.From > 0 {
				fromCheckpoint++
			}
			if rp.Report == nil || len(rp.Report.Steps) != len(tr.Choices) || !rp.Report.Steps[len(rp.Report.Steps)-1].Failure {
				t.Errorf("%s: replay report %v", f.Name, rp.Report)
			}
			hashes[i] = record.Hash(rp.Transitions)
		}
		if hashes[0] != hashes[1] || hashes[0] != record.Hash(res.BugBranch.Transitions) {
			t.Errorf("%s: transitions differ between the exploration, the replay from a checkpoint and from the start", f.Name)
		}
	}
	t.Logf("%d bugs replayed, %d from a checkpoint", n, fromCheckpoint)
	if n < 10 {
		t.Fatalf("only %d bugs replayed", n)
	}
	if fromCheckpoint < n/2 {
		t.Errorf("only %d of %d replays started from a checkpoint", fromCheckpoint, n)
	}
}

// TestReplayDetectsDivergence: a stored trace whose transition hash does
// not match what re-execution produces is reported, not rendered.
func TestReplayDetectsDivergence(t *testing.T) {
	st := openStore(t)
	run, res := explore(t, st, "sem_if/paradise_lost", job.Config{Spec: job.Spec{Spec: dpor.Spec{Strategy: "icb"}}}, job.Persist{CheckpointEvery: -1})
	if res.Bug == nil {
		t.Fatal("no bug")
	}
	tr, err := st.Trace(run.ID, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr.Hashes[len(tr.Hashes)/2][0] ^= 1
	if _, err := Trace(st, run, tr, Options{}); err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Fatalf("a corrupted hash replayed: %v", err)
	}
}

func keys(cs []*race.Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%x/%x both=%v first=%v realloc=%v count=%d", c.A.PC, c.B.PC, c.BothOrder, c.FirstInterleaving, c.Realloc, c.Count))
	}
	slices.Sort(out)
	return out
}

func onlineKeys(res *job.Result) []string {
	var cs []*race.Candidate
	for _, r := range res.Races {
		cs = append(cs, r.Candidate)
	}
	return keys(cs)
}

// TestOfflineRaces: on the thesis's Fig. 2.6 programs, where Pure and
// Limited HB disagree, one stored run (explored under Limited HB) re-
// analysed offline under each mode gives exactly what an exploration
// under that mode reports, without re-execution; twice the same answer.
func TestOfflineRaces(t *testing.T) {
	st := openStore(t)
	for _, name := range []string{"ref/fig2_6a", "ref/fig2_6b", "ref/fig1"} {
		cfg := job.Config{Spec: job.Spec{Kernel: kernel.Config{Filters: thesisFilters}}}
		lcfg, pcfg := cfg, cfg
		lcfg.HB, pcfg.HB = race.Limited, race.Pure
		run, lim := explore(t, st, name, lcfg, job.Persist{})
		_, pure := explore(t, st, name, pcfg, job.Persist{NoBranchLog: true})
		if onlineKeys(lim) == nil && onlineKeys(pure) == nil {
			t.Fatalf("%s: no candidates in either mode", name)
		}
		for _, c := range []struct {
			mode race.Mode
			want []string
		}{{race.Limited, onlineKeys(lim)}, {race.Pure, onlineKeys(pure)}} {
			var answers [2][]string
			for i := range answers {
				got, n, err := Races(st, run, 1, c.mode)
				if err != nil {
					t.Fatal(err)
				}
				if n != lim.Executed {
					t.Errorf("%s: %d interleavings analysed, %d explored", name, n, lim.Executed)
				}
				answers[i] = keys(got)
			}
			if !slices.Equal(answers[0], c.want) {
				t.Errorf("%s, %v offline:\n%v\nonline:\n%v", name, c.mode, answers[0], c.want)
			}
			if !slices.Equal(answers[0], answers[1]) {
				t.Errorf("%s, %v: two offline analyses differ", name, c.mode)
			}
		}
		if slices.Equal(onlineKeys(lim), onlineKeys(pure)) && name != "ref/fig1" {
			t.Errorf("%s: Pure and Limited HB agree; the fixture should show their difference", name)
		}
	}
}
