package check

import (
	"fmt"
	"strings"
	"testing"

	"landslide/record"
)

// TestCxxTraceCounts: the C++ twins of the posix/ families (std::atomic,
// std::thread; fixtures/src/cxx/) have the traces of the C programs,
// which are the published counts: the library's atomics are the same
// instructions as C11's, and std::thread's start makes no event of its
// own (its closure is freed by join, not by the new thread). Both
// strategies, with every shared access a PP.
func TestCxxTraceCounts(t *testing.T) {
	for _, c := range []struct {
		name    string
		n, want int
	}{
		{"peterson", 1, 310},
		{"peterson", 2, 2420},
		{"indexer", 12, 8},
		{"indexer", 13, 64},
	} {
		for _, strategy := range []string{"optimal", "dpor"} {
			res, _, _ := exploreEveryAccess(t, "../fixtures/bin/cxx/"+c.name+".elf", c.n, strategy)
			wantTraces(t, fmt.Sprintf("cxx/%s(%d), %s", c.name, c.n, strategy), res, c.want)
		}
		if twin := explorePosix(t, c.name, c.n, "optimal"); twin.Interleavings != c.want {
			t.Errorf("posix/%s(%d): %d interleavings, want %d", c.name, c.n, twin.Interleavings, c.want)
		}
	}
}

// TestCxxPrograms: the C++ fixtures of the library verify with every
// shared access a PP, under both strategies with the same traces (the
// two algorithms agree on the count; thread_args has the count its
// independent parts multiply to), and the buggy ones fail with their
// assertion: treiber_lost's lost push, terminate's joinable thread
// destroyed (std::terminate).
func TestCxxPrograms(t *testing.T) {
	for _, name := range []string{"atomics", "condvar", "treiber", "statics", "thread_args"} {
		var counts []int
		for _, strategy := range []string{"optimal", "dpor"} {
			res, _, _ := exploreEveryAccess(t, "../fixtures/bin/cxx/"+name+".elf", 0, strategy)
			if !res.Verified {
				t.Fatalf("cxx/%s, %s: not verified: %v", name, strategy, res.Bug)
			}
			counts = append(counts, res.Traces)
		}
		if counts[0] != counts[1] || counts[0] < 2 {
			t.Errorf("cxx/%s: %d traces under optimal DPOR, %d under dpor", name, counts[0], counts[1])
		}
		// thread_args: three threads add to one atomic (3! orders), two
		// deposit under one mutex (2), two call_once (2); the rest is
		// each thread's own.
		if name == "thread_args" && counts[0] != 6*2*2 {
			t.Errorf("cxx/thread_args: %d traces, want 24", counts[0])
		}
	}
	for _, c := range []struct{ name, msg string }{
		{"treiber_lost", "left == 2"},
		{"terminate", "std::terminate called"},
	} {
		res, _, _ := exploreEveryAccess(t, "../fixtures/bin/cxx/"+c.name+".elf", 0, "optimal")
		if res.Bug == nil || res.Bug.Kind != record.BugAssert || !strings.Contains(res.Bug.Message, c.msg) {
			t.Errorf("cxx/%s: bug %v, want an assertion failure about %q", c.name, res.Bug, c.msg)
		}
	}
}
