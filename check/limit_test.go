package check

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"landslide/kernel"
	"landslide/quicksand"
	"landslide/store"
)

// manyThreads is posix/many_threads (n threads alive at once) resolved
// with the thread limit maxThreads (0: the default).
func manyThreads(t *testing.T, n, maxThreads int) ([]byte, ResolvedPPs) {
	t.Helper()
	image, err := os.ReadFile("../fixtures/bin/posix/many_threads.elf")
	if err != nil {
		t.Fatal(err)
	}
	pps, err := ResolvePPs(image, PPRequest{MaxThreads: maxThreads, Args: []string{"many_threads.elf", fmt.Sprint(n)}})
	if err != nil {
		t.Fatal(err)
	}
	return image, pps
}

// wantThreadLimit checks a limit's message: the limit, and the flag that
// raises it.
func wantThreadLimit(t *testing.T, what, msg string, limit int) {
	t.Helper()
	if want := fmt.Sprintf("thread limit: creating a thread would exceed %d live threads (--max-threads raises it)", limit); !strings.Contains(msg, want) {
		t.Errorf("%s: %q, want %q", what, msg, want)
	}
}

// TestCheckerLimit: a program that creates more threads than the limit
// reaches a limit of the checker, never a bug, at every level: one
// execution (Execute: no Bug, the Limit), an exploration (outcome Limit,
// stored as status "limit" with no bug or bug trace, and not resumable),
// and a Quicksand run (each job ends at the limit, the others still run,
// verdict Limit, no bug). A program of 100 threads runs within the
// default limit, which stops one of 300.
func TestCheckerLimit(t *testing.T) {
	image, pps := manyThreads(t, 10, 8)
	ex, err := Execute(image, "many_threads.elf", pps.Kernel, Schedule{Seed: -1})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Bug != nil || ex.Limit == nil {
		t.Fatalf("execute: bug %v, limit %v; want a limit and no bug", ex.Bug, ex.Limit)
	}
	wantThreadLimit(t, "execute", ex.Limit.Message, 8)

	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := Recording{Store: st}
	cfg := Config{Spec: Spec{Program: "many_threads.elf", Kernel: pps.Kernel, Budget: time.Minute}, Image: image}
	res, err := Explore(context.Background(), cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	v := res.Verdict
	if v.Outcome != Limit || v.Status != store.StatusLimit || res.Bug != nil || res.Trace != nil || res.Verified || res.Stopped != StopCheckerLimit {
		t.Fatalf("explore: %s (%s: %s), bug %v, verified %v, stopped %q; want a limit", v.Outcome, v.Status, v.Message, res.Bug, res.Verified, res.Stopped)
	}
	wantThreadLimit(t, "explore verdict", v.Message, 8)
	if !strings.Contains(res.LimitReplay, "--max-threads 8 --schedule ") {
		t.Errorf("replay %q", res.LimitReplay)
	}
	run, err := st.Run(res.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != store.StatusLimit {
		t.Errorf("stored run: %s (%s)", run.Status, run.Message)
	}
	wantThreadLimit(t, "stored run", run.Message, 8)
	if bugs, err := st.Bugs(run.ID); err != nil || len(bugs) != 0 {
		t.Errorf("stored bugs: %v %v; a limit is no bug", bugs, err)
	}
	if jobs, err := st.Jobs(run.ID); err != nil || len(jobs) != 1 || jobs[0].Status != store.StatusLimit {
		t.Errorf("stored job: %v %+v", err, jobs)
	}
	if _, err := ResumeExplore(context.Background(), rec, run, Overrides{}, Hooks{}); !errors.Is(err, ErrLimitReached) {
		t.Errorf("resume: %v, want ErrLimitReached", err)
	}

	// Quicksand: every job of a P2 program that creates threads until
	// it cannot ends at the limit; none is a bug, and the run verifies
	// nothing.
	p2, err := os.ReadFile("../fixtures/bin/bugs/thread_limit.elf")
	if err != nil {
		t.Fatal(err)
	}
	qp, err := ResolvePPs(p2, PPRequest{MaxThreads: 8, Args: []string{"thread_limit.elf"}})
	if err != nil {
		t.Fatal(err)
	}
	qs, err := Quicksand(context.Background(), QuicksandSpec{
		Base:    Spec{Program: "thread_limit.elf", Kernel: qp.Kernel},
		Options: quicksand.Options{Budget: 1000, Deterministic: true},
	}, p2, Recording{}, QuicksandHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if qs.Verdict.Outcome != Limit || qs.Verdict.Status != store.StatusLimit || len(qs.Bugs) != 0 || qs.Sched.Verified() {
		t.Fatalf("quicksand: %s (%s), %d bugs, verified %v", qs.Verdict.Outcome, qs.Verdict.Message, len(qs.Bugs), qs.Sched.Verified())
	}
	wantThreadLimit(t, "quicksand verdict", qs.Verdict.Message, 8)
	if len(qs.Sched.Jobs) < 2 {
		t.Fatalf("quicksand: %d jobs", len(qs.Sched.Jobs))
	}
	for _, j := range qs.Sched.Jobs {
		if j.Status != quicksand.LimitReached || j.Bug != "" {
			t.Errorf("quicksand job %d: %s %q, want limit (the other jobs go on after one)", j.ID, j.Status, j.Bug)
		}
		wantThreadLimit(t, fmt.Sprintf("quicksand job %d", j.ID), j.Limit, 8)
	}

	// The default limit: 100 threads run (and explore), 300 do not.
	image, pps = manyThreads(t, 100, 0)
	ex, err = Execute(image, "many_threads.elf", pps.Kernel, Schedule{Seed: -1})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Bug != nil || ex.Limit != nil || ex.ExitStatus != 0 {
		t.Fatalf("100 threads: bug %v, limit %v, status %d", ex.Bug, ex.Limit, ex.ExitStatus)
	}
	cfg = Config{Spec: Spec{Program: "many_threads.elf", Kernel: pps.Kernel, Budget: time.Minute}, Image: image}
	cfg.MaxInterleavings = 3
	res, err = Explore(context.Background(), cfg, Recording{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Limit != nil || res.Bug != nil || res.Executed != 3 || res.Verdict.Outcome != Budget {
		t.Fatalf("100 threads, 3 interleavings: limit %v, bug %v, %d run, %s", res.Limit, res.Bug, res.Executed, res.Verdict.Outcome)
	}
	image, pps = manyThreads(t, 300, 0)
	ex, err = Execute(image, "many_threads.elf", pps.Kernel, Schedule{Seed: -1})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Bug != nil || ex.Limit == nil {
		t.Fatalf("300 threads: bug %v, limit %v", ex.Bug, ex.Limit)
	}
	wantThreadLimit(t, "300 threads", ex.Limit.Message, kernel.DefaultMaxThreads)
}
