// Package gctune sets the Go collector for a model checker's workload:
// exploration allocates quickly and keeps little, so a larger heap
// target than Go's default buys CPU, bounded by a soft memory limit. The
// command calls Tune at start, and the test binaries of the packages
// that explore call it in TestMain, so tests run the engine as users do.
package gctune

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// gcPercent is the collector's target the command sets when GOGC is not
// in its environment: the heap may grow to five times what is live
// between collections, instead of Go's default of twice. Exploration
// allocates quickly and keeps little (a snapshot per node of the path,
// the frontier): at 400, lastzero(11), readers(13) and peterson(3) use
// 0.82, 0.83 and 0.88 of the CPU they use at Go's default, for a peak of
// 78-135 MiB instead of 35-65 (BENCHMARKS.md, "Issue 40, fifth
// session").
const gcPercent = 400

// Tune sets the collector for a model checker's run unless the user's
// environment does (GOGC, GOMEMLIMIT, as the Go runtime reads them). With
// the larger target it also sets a soft memory limit of half the memory
// the process may use (the machine's, or its cgroup's when lower), so a
// run whose live heap grows large collects as often as at Go's default
// before it would take more than that.
func Tune() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if m := memoryLimit(readFile("/proc/meminfo"), readFile("/sys/fs/cgroup/memory.max")); m > 0 {
		debug.SetMemoryLimit(m / 2)
	}
}

// RunTests is a test binary's TestMain for packages whose tests explore:
// it tunes the collector as the command does, runs the tests (m is the
// *testing.M) and exits with their status.
func RunTests(m interface{ Run() int }) {
	Tune()
	os.Exit(m.Run())
}

func readFile(name string) []byte {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	return b
}

// memoryLimit is the memory the process may use, in bytes: MemTotal of
// meminfo (/proc/meminfo's text), or the cgroup v2 memory.max when it
// is a number and lower; 0 when neither says.
func memoryLimit(meminfo, cgroupMax []byte) int64 {
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 && kb < 1<<53 {
				total = kb << 10
			}
			break
		}
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(string(cgroupMax)), 10, 64); err == nil && v > 0 && (total == 0 || v < total) {
		total = v
	}
	return total
}
