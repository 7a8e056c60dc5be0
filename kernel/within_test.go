package kernel

import (
	"testing"

	"landslide/fixtures"
	"landslide/record"
	"landslide/schedule"
)

// TestAcceptPPThesisTable is the worked example of thesis §3.4.1
// (check_withins), with stack 1 = mutex_lock < malloc < thr_create < main
// and stack 2 = mutex_lock < cond_wait < thr_join < main.
func TestAcceptPPThesisTable(t *testing.T) {
	stack1 := []string{"mutex_lock", "malloc", "thr_create", "main"}
	stack2 := []string{"mutex_lock", "cond_wait", "thr_join", "main"}
	within := func(f string) Filter { return Filter{Within: true, Func: f} }
	without := func(f string) Filter { return Filter{Func: f} }
	cases := []struct {
		name         string
		filters      []Filter
		want1, want2 bool
	}{
		{"within mutex_lock; without malloc", []Filter{within("mutex_lock"), without("malloc")}, false, true},
		{"within thr_join", []Filter{within("thr_join")}, false, true},
		{"without cond_wait", []Filter{without("cond_wait")}, true, false},
		{"without main; within mutex_lock", []Filter{without("main"), within("mutex_lock")}, true, true},
		{"no directives", nil, true, true},
	}
	for _, c := range cases {
		if got := acceptPP(c.filters, stack1); got != c.want1 {
			t.Errorf("%s, stack 1: accept = %v, thesis says %v", c.name, got, c.want1)
		}
		if got := acceptPP(c.filters, stack2); got != c.want2 {
			t.Errorf("%s, stack 2: accept = %v, thesis says %v", c.name, got, c.want2)
		}
	}
}

// TestWithinFilterOnRun: with "within sem_wait", every function-entry PP of
// paradise_lost has sem_wait on its stack, and there are fewer of them
// than without the filter (but some).
func TestWithinFilterOnRun(t *testing.T) {
	f, _ := fixtures.Lookup("ref/paradise_lost")
	img := load(t, f)
	count := func(cfg Config) (n int, k *Kernel, trs []*record.Transition) {
		k, err := New(img, cfg)
		if err != nil {
			t.Fatal(err)
		}
		o, err := k.Play(schedule.Default{})
		if err != nil || o.Bug != nil {
			t.Fatal(err, o.Bug)
		}
		for _, tr := range o.Transitions {
			if tr.PP.Kind == record.PPSyncFunc {
				n++
			}
		}
		return n, k, o.Transitions
	}
	all, _, _ := count(Config{})
	some, k, trs := count(Config{Filters: []Filter{{Within: true, Func: "sem_wait"}}})
	if some == 0 || some >= all {
		t.Fatalf("sync PPs: %d with the filter, %d without", some, all)
	}
	for _, tr := range trs {
		if tr.PP.Kind != record.PPSyncFunc {
			continue
		}
		found := false
		for i, pc := range tr.Stack {
			if i > 0 {
				pc -= 4
			}
			if name, _, _ := k.syms.FuncAt(pc); name == "sem_wait" {
				found = true
			}
		}
		if !found {
			t.Errorf("PP at %s without sem_wait on the stack", tr.PP)
		}
	}
}

// TestWithinSourceName: a directive may name a C++ function by its
// source name ("push" for _ZL4pushi): with data-race PPs at every
// instruction of push, "without push" leaves none of them, "within
// push" keeps them all.
func TestWithinSourceName(t *testing.T) {
	f, _ := fixtures.Lookup("cxx/treiber_lost")
	img := load(t, f)
	k0, err := New(img, Config{})
	if err != nil {
		t.Fatal(err)
	}
	start, size, ok := k0.syms.Lookup("_ZL4pushi")
	if !ok {
		t.Fatal("no push in cxx/treiber_lost")
	}
	var pcs []uint64
	for pc := start; pc < start+size; pc += 4 {
		pcs = append(pcs, pc)
	}
	races := func(filters []Filter) int {
		k, err := New(img, Config{DataRacePCs: pcs, Filters: filters})
		if err != nil {
			t.Fatal(err)
		}
		o, err := k.Play(schedule.Default{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tr := range o.Transitions {
			if tr.PP.Kind == record.PPDataRace {
				n++
			}
		}
		return n
	}
	all := races(nil)
	if all == 0 {
		t.Fatal("no data-race PP in push without directives")
	}
	if n := races([]Filter{{Func: "push"}}); n != 0 {
		t.Errorf("without push: %d data-race PPs in push", n)
	}
	if n := races([]Filter{{Within: true, Func: "push(int)"}}); n != all {
		t.Errorf("within push(int): %d data-race PPs, want all %d", n, all)
	}
}
