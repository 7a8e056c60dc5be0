package main

import (
	"os"
	"testing"

	"landslide/fixtures"
	"landslide/job"
)

// TestSameTracesOnMutexTest: on ref/mutex_test under the mutex PPs, where
// the golden script and BENCHMARKS count 125 traces, both strategies
// reach the same 125 (dpor in 193 executions, optimal in 125) and the
// same single outcome, and an execution is described only where asked.
func TestSameTracesOnMutexTest(t *testing.T) {
	f, _ := fixtures.Lookup("ref/mutex_test")
	img, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	r, err := job.ResolvePPs(img, job.PPRequest{PPs: []string{"mutex_lock", "mutex_unlock"}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := explore(img, r.Kernel, "optimal", nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := explore(img, r.Kernel, "dpor", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.traces) != 125 || len(d.traces) != 125 || o.res.Executed != 125 || d.res.Executed != 193 {
		t.Fatalf("optimal %d traces in %d executions, dpor %d in %d; want 125 in 125, 125 in 193", len(o.traces), o.res.Executed, len(d.traces), d.res.Executed)
	}
	if missing(o.traces, d.traces) != 0 || missing(d.traces, o.traces) != 0 {
		t.Errorf("the trace sets differ: %d only under optimal, %d only under dpor", missing(o.traces, d.traces), missing(d.traces, o.traces))
	}
	if len(o.outcomes) != 1 || len(d.outcomes) != 1 {
		t.Errorf("outcomes: optimal %v, dpor %v; want one clean end each", o.outcomes, d.outcomes)
	}
}
