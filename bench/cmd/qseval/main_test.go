package main

import (
	"testing"
	"time"

	"landslide/check"
)

// TestCellSpec: every configuration gets the same CPU time. A Quicksand
// cell divides it over its workers, with a home stretch of 1/60 of its
// wall-clock budget unless one is given; a control keeps it on one CPU.
// Each configuration sets what its quicksand flags would.
func TestCellSpec(t *testing.T) {
	qs, ctl := configurations[0], configurations[2]
	if qs.control || !ctl.control {
		t.Fatalf("configurations reordered: %+v", configurations)
	}
	cases := []struct {
		o                   options
		cfg                 configuration
		budget, homeStretch time.Duration
		workers             int
	}{
		{options{budget: 2 * time.Minute, cpus: 1}, qs, 2 * time.Minute, 2 * time.Second, 1},
		{options{budget: 2 * time.Minute, cpus: 2}, qs, time.Minute, time.Second, 2},
		{options{budget: 2 * time.Minute, cpus: 2, homeStretch: 5 * time.Second}, qs, time.Minute, 5 * time.Second, 2},
		{options{budget: 2 * time.Minute, cpus: 2}, ctl, 2 * time.Minute, 60 * time.Second, 1},
		{options{budget: 2 * time.Minute, cpus: 1}, ctl, 2 * time.Minute, 60 * time.Second, 1},
	}
	for _, c := range cases {
		s := c.o.cellSpec(c.cfg).Options.WithDefaults()
		if s.Budget != c.budget || s.HomeStretch != c.homeStretch || s.Workers != c.workers || !s.FirstBug {
			t.Errorf("cellSpec(%+v, %s) = budget %s, home stretch %s, %d workers, first bug %v; want %s, %s, %d, true",
				c.o, c.cfg.name, s.Budget, s.HomeStretch, s.Workers, s.FirstBug, c.budget, c.homeStretch, c.workers)
		}
	}
	want := map[string]struct {
		hb                  check.HB
		control, everywhere bool
		strategy            string
	}{
		"QS-LHB": {check.Limited, false, false, ""},
		"QS-PHB": {check.Pure, false, false, ""},
		"ICB":    {check.Limited, true, false, "icb"},
		"DPOR":   {check.Limited, true, false, ""},
		"ShMem":  {check.Limited, true, true, ""},
	}
	for _, cfg := range configurations {
		s, w := (options{budget: time.Minute, cpus: 2}).cellSpec(cfg), want[cfg.name]
		if s.Base.HB != w.hb || s.Options.Control != w.control || s.Base.PreemptEverywhere != w.everywhere || s.Base.Strategy != w.strategy {
			t.Errorf("%s (%s): hb %v, control %v, everywhere %v, strategy %q; want %+v", cfg.name, cfg.flags,
				s.Base.HB, s.Options.Control, s.Base.PreemptEverywhere, s.Base.Strategy, w)
		}
	}
}

func TestStealShare(t *testing.T) {
	if got := (cpuStat{total: 400, steal: 100}).share(); got != 0.25 {
		t.Errorf("steal share = %v, want 0.25", got)
	}
	if got := (cpuStat{}).share(); got != -1 {
		t.Errorf("no time counted: %v, want -1", got)
	}
}
