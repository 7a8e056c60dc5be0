package check

import (
	"context"
	"os"
	"testing"

	"landslide/quicksand"
	"landslide/store"
)

// TestQuicksandResumeAfterBug: a stored Quicksand run interrupted after a
// job found its bug, then resumed, reports that bug as an uninterrupted
// run does: the same job, message and signature. The resuming process
// did not find the bug itself; its signature comes from the store (a
// resumed run once gave the message as the signature, so the two
// processes' results differed and deduplication could count the bug
// twice).
func TestQuicksandResumeAfterBug(t *testing.T) {
	image, err := os.ReadFile("../fixtures/bin/ref/fig1.elf")
	if err != nil {
		t.Fatal(err)
	}
	pps, err := ResolvePPs(image, PPRequest{Args: []string{"fig1.elf"}})
	if err != nil {
		t.Fatal(err)
	}
	spec := QuicksandSpec{
		Base:    Spec{Program: "fig1.elf", Kernel: pps.Kernel, TestingMutexes: pps.TestingMutexes},
		Options: quicksand.Options{Budget: 20000, Deterministic: true},
	}
	want, err := Quicksand(context.Background(), spec, image, Recording{}, QuicksandHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if want.Verdict.Outcome != Bug || len(want.Bugs) != 1 {
		t.Fatalf("uninterrupted: %s with %d bugs, want one bug", want.Verdict.Outcome, len(want.Bugs))
	}
	wb := want.Bugs[0]
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
	if err := first.Finish(rec); err != nil {
		t.Fatal(err)
	}

	run, err := st.Run(first.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ResumeQuicksand(context.Background(), rec, run, 0, QuicksandHooks{})
	if err != nil {
		t.Fatal(err)
	}
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
