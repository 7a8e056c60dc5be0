package gctune

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	meminfo := []byte("MemTotal:       24542532 kB\nMemFree:         1000 kB\n")
	for _, c := range []struct {
		name            string
		meminfo, cgroup string
		want            int64
	}{
		{"machine", string(meminfo), "", 24542532 << 10},
		{"unlimited cgroup", string(meminfo), "max\n", 24542532 << 10},
		{"lower cgroup", string(meminfo), "1073741824\n", 1 << 30},
		{"higher cgroup", string(meminfo), "107374182400\n", 24542532 << 10},
		{"cgroup alone", "", "1073741824", 1 << 30},
		{"neither", "", "", 0},
		{"damaged", "MemTotal: lots kB\n", "-5", 0},
		{"other unit", "MemTotal: 5 MB\n", "", 0},
	} {
		if got := memoryLimit([]byte(c.meminfo), []byte(c.cgroup)); got != c.want {
			t.Errorf("%s: memoryLimit = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestTuneGCLeavesTheUsersSettings: GOGC or GOMEMLIMIT in the environment
// are the user's, and Tune sets only what they leave.
func TestTuneGCLeavesTheUsersSettings(t *testing.T) {
	pct := debug.SetGCPercent(100)
	lim := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(pct); debug.SetMemoryLimit(lim) })

	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "")
	Tune()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, the percent became %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOGC set, the limit became %d", got)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "1GiB")
	Tune()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("without GOGC, the percent is %d, want %d", got, gcPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, the limit became %d", got)
	}

	t.Setenv("GOMEMLIMIT", "")
	Tune()
	want := memoryLimit(readFile("/proc/meminfo"), readFile("/sys/fs/cgroup/memory.max")) / 2
	if got := debug.SetMemoryLimit(-1); want > 0 && got != want {
		t.Errorf("the limit is %d, want half of %d", got, 2*want)
	}
}
