package main

import (
	"slices"
	"testing"
	"time"
)

// TestCellArgs: every configuration gets the same CPU time. A Quicksand
// cell divides it over its workers, with a home stretch of 1/60 of its
// wall-clock budget unless one is given; a control keeps it on one CPU.
func TestCellArgs(t *testing.T) {
	qs, ctl := configurations[0], configurations[2]
	if qs.control || !ctl.control {
		t.Fatalf("configurations reordered: %+v", configurations)
	}
	cases := []struct {
		o    options
		cfg  configuration
		want []string
	}{
		{options{budget: 2 * time.Minute, cpus: 1}, qs, []string{"--budget", "2m0s", "-c", "1", "--home-stretch", "2s"}},
		{options{budget: 2 * time.Minute, cpus: 2}, qs, []string{"--budget", "1m0s", "-c", "2", "--home-stretch", "1s"}},
		{options{budget: 2 * time.Minute, cpus: 2, homeStretch: 5 * time.Second}, qs, []string{"--budget", "1m0s", "-c", "2", "--home-stretch", "5s"}},
		{options{budget: 2 * time.Minute, cpus: 2}, ctl, []string{"--budget", "2m0s", "-c", "1"}},
		{options{budget: 2 * time.Minute, cpus: 1}, ctl, []string{"--budget", "2m0s", "-c", "1"}},
	}
	for _, c := range cases {
		if got := c.o.cellArgs(c.cfg); !slices.Equal(got, c.want) {
			t.Errorf("cellArgs(%+v, %s) = %q, want %q", c.o, c.cfg.name, got, c.want)
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
