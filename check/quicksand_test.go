package check

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"landslide/job"
	"landslide/quicksand"
	"landslide/store"
)

// deterministicRef is a Quicksand run of the reference test name with
// the interleaving clock and budget interleavings, and its image.
func deterministicRef(t *testing.T, name string, budget int) (QuicksandSpec, []byte) {
	t.Helper()
	image, err := os.ReadFile("../fixtures/bin/ref/" + name + ".elf")
	if err != nil {
		t.Fatal(err)
	}
	pps, err := ResolvePPs(image, PPRequest{Args: []string{name + ".elf"}})
	if err != nil {
		t.Fatal(err)
	}
	return QuicksandSpec{
		Base:    Spec{Program: name + ".elf", Kernel: pps.Kernel, TestingMutexes: pps.TestingMutexes},
		Options: quicksand.Options{Budget: time.Duration(budget), Deterministic: true},
	}, image
}

// finishAndResume records the end of the interrupted run first in rec's
// store and resumes it there to its end.
func finishAndResume(t *testing.T, rec Recording, first *QuicksandResult) *QuicksandResult {
	t.Helper()
	if err := first.Finish(rec); err != nil {
		t.Fatal(err)
	}
	run, err := rec.Store.Run(first.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ResumeQuicksand(context.Background(), rec, run, 0, QuicksandHooks{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestQuicksandResumeAfterBug: a stored Quicksand run interrupted after a
// job found its bug, then resumed, reports that bug as an uninterrupted
// run does: the same job, message and signature. The resuming process
// did not find the bug itself; its signature comes from the store (a
// resumed run once gave the message as the signature, so the two
// processes' results differed and deduplication could count the bug
// twice).
//
// With the PCT walks on (the default) and the run ended at its first
// bug, a walk finds fig1's bug first: the walk's bug, a job of its own,
// is stored and resumed the same way; with them off, a job's.
func TestQuicksandResumeAfterBug(t *testing.T) {
	for _, walks := range []bool{false, true} {
		t.Run(fmt.Sprintf("walks=%v", walks), func(t *testing.T) { testResumeAfterBug(t, walks) })
	}
}

func testResumeAfterBug(t *testing.T, walks bool) {
	spec, image := deterministicRef(t, "fig1", 20000)
	if !walks {
		spec.Options.WalkShare = -1
	} else {
		// Ended at its first bug, the run's is a walk's, at interleaving
		// 11,122 (cli's golden quicksand.txt, --first-bug).
		spec.Options.FirstBug = true
	}
	want, err := Quicksand(context.Background(), spec, image, Recording{}, QuicksandHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if want.Verdict.Outcome != Bug || len(want.Bugs) != 1 {
		t.Fatalf("uninterrupted: %s with %d bugs, want one bug", want.Verdict.Outcome, len(want.Bugs))
	}
	wb := want.Bugs[0]
	if byWalk := want.Sched.Jobs[wb.Job-1].Walk != nil; byWalk != walks {
		t.Fatalf("uninterrupted: the bug's job %d was found by a walk: %v", wb.Job, byWalk)
	}
	if wb.Signature == wb.Message {
		t.Fatalf("uninterrupted: the signature is the message %q", wb.Message)
	}

	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := Recording{Store: st}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, err := Quicksand(ctx, spec, image, rec, QuicksandHooks{OnJobDone: func(id int) {
		if id == wb.Job {
			cancel() // the bug's job has committed its end
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Interrupted || len(first.Bugs) != 1 {
		t.Fatalf("interrupted run: interrupted %v, %d bugs; want interrupted after the bug", first.Interrupted, len(first.Bugs))
	}
	got := finishAndResume(t, rec, first)
	if got.Verdict.Outcome != Bug || len(got.Bugs) != 1 {
		t.Fatalf("resumed: %s with %d bugs, want one bug", got.Verdict.Outcome, len(got.Bugs))
	}
	gb := got.Bugs[0]
	if gb.Trace != nil {
		t.Error("resumed: the bug has a trace, so this process found it again: no test of the stored signature")
	}
	if gb.Job != wb.Job || gb.Message != wb.Message || gb.Signature != wb.Signature || gb.FoundAt != wb.FoundAt {
		t.Errorf("resumed: job %d %q signature %s at %v; uninterrupted: job %d %q signature %s at %v",
			gb.Job, gb.Message, gb.Signature, gb.FoundAt, wb.Job, wb.Message, wb.Signature, wb.FoundAt)
	}
}

// TestQuicksandInterruptAnywhere: an interrupted deterministic run,
// resumed, ends exactly as the uninterrupted run, wherever the
// interruption fell. The interrupted job used to be recorded as
// suspended by the scheduler: the resumed run then started the next
// pending job instead, and job 2 of paradise_lost ended with 100 or 3,000
// interleavings instead of 7,653 (or 2,414 after three suspensions), with
// a budget of 40,000 interleavings (20,000 here: job 2 runs 2,083).
func TestQuicksandInterruptAnywhere(t *testing.T) {
	spec, image := deterministicRef(t, "paradise_lost", 20000)
	jobs := func(r *QuicksandResult) string {
		var b strings.Builder
		for _, j := range r.Sched.Jobs {
			fmt.Fprintf(&b, "%d %v %d %d; ", j.ID, j.Status, j.Interleavings, j.Suspensions)
		}
		return b.String()
	}
	want, err := Quicksand(context.Background(), spec, image, Recording{}, QuicksandHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if j := want.Sched.Jobs[1]; j.Suspensions != 1 || j.Interleavings < 2001 {
		t.Fatalf("uninterrupted: job 2 has %d interleavings and %d suspensions; the cuts below assume more than 2,000 and 1", j.Interleavings, j.Suspensions)
	}
	// In job 2 before the scheduler suspends it, and in job 3 after.
	j3 := want.Sched.Jobs[2].Interleavings
	if j3 < 10 {
		t.Fatalf("uninterrupted: job 3 has %d interleavings; the cut below assumes 10 or more", j3)
	}
	for _, cut := range []struct{ job, n int }{{2, 100}, {2, 2000}, {3, j3 / 2}} {
		st, err := store.Open(t.TempDir(), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rec := Recording{Store: st}
		ctx, cancel := context.WithCancel(context.Background())
		first, err := Quicksand(ctx, spec, image, rec, QuicksandHooks{OnStep: func(id int, s job.Step) {
			if id == cut.job && s.Interleavings == cut.n {
				cancel()
			}
		}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if !first.Interrupted {
			t.Fatalf("cut %v: the run was not interrupted", cut)
		}
		got := finishAndResume(t, rec, first)
		if g, w := jobs(got), jobs(want); g != w {
			t.Errorf("interrupted at job %d's interleaving %d, resumed:\n%s\nuninterrupted:\n%s", cut.job, cut.n, g, w)
		}
		st.Close()
	}
}
