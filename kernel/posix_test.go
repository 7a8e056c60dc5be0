package kernel

import (
	"fmt"
	"strings"
	"testing"

	"landslide/record"
	"landslide/schedule"
)

// TestPosixMisuse: each misuse POSIX leaves undefined is a bug of the
// expected kind, with a message naming it (fixture posix/misuse, case
// argv[1]); case 6 (opposite lock orders) deadlocks under one schedule,
// with each thread's wait named.
func TestPosixMisuse(t *testing.T) {
	img := fixtureImage(t, "posix/misuse")
	for _, c := range []struct {
		k    int
		kind record.BugKind
		msg  string
	}{
		{1, record.BugSyscall, "pthread_join(2): no joinable thread 2 (already joined"},
		{2, record.BugSyscall, "thread 1 does not hold this mutex (thread 2 holds it)"},
		{3, record.BugSyscall, "pthread_mutex_destroy(0x"},
		{4, record.BugDeadlock, "already holds this mutex"},
		{5, record.BugSyscall, "pthread_cond_wait(0x"},
		{7, record.BugSyscall, "thread 2 is detached"},
		{8, record.BugSyscall, "__VERIFIER_nondet: the domain [3, 1] is not 1 to 4096 values"},
	} {
		o := play(t, img, Config{Args: []string{"misuse", fmt.Sprint(c.k)}}, schedule.Default{})
		if o.Bug == nil || o.Bug.Kind != c.kind || !strings.Contains(o.Bug.Message, c.msg) {
			t.Errorf("misuse %d: bug %v, want %s containing %q", c.k, o.Bug, c.kind, c.msg)
		}
	}
	o := play(t, img, Config{Args: []string{"misuse", "6"}}, schedule.Default{})
	if o.Bug != nil {
		t.Fatalf("misuse 6, default schedule: %v (the threads run one after the other)", o.Bug)
	}
	// Some schedule has thread 2 take a and thread 3 take b, each then
	// waiting for the other (the first random one that does, by seed).
	var dead *Outcome
	for seed := uint64(1); seed <= 200 && dead == nil; seed++ {
		if o := play(t, img, Config{Args: []string{"misuse", "6"}}, schedule.NewRandom(seed)); o.Bug != nil {
			dead = o
		}
	}
	if dead == nil || dead.Bug.Kind != record.BugDeadlock {
		t.Fatalf("misuse 6: no random schedule of 200 deadlocks (%v)", dead)
	}
	o = dead
	var waits []string
	for _, d := range o.Bug.Details {
		waits = append(waits, d.Title)
	}
	all := strings.Join(waits, "; ")
	if !strings.Contains(all, "thread 2 waits in pthread_mutex_lock") || !strings.Contains(all, "held by thread 3") ||
		!strings.Contains(all, "thread 1 waits in pthread_join for thread 2") {
		t.Errorf("deadlock details: %s", all)
	}
}

// TestEveryAccessOneEvent: with EveryAccess each transition makes at most
// one shared access, except that an LR and the SC after it (a
// compare-and-swap) are one event; without it the same run has
// transitions of many accesses (indexer: 12 threads, 4 CASes each).
func TestEveryAccessOneEvent(t *testing.T) {
	img := fixtureImage(t, "posix/indexer")
	args := []string{"indexer", "12"}
	every := play(t, img, Config{Args: args, EveryAccess: true}, schedule.NewRandom(3))
	if every.Bug != nil {
		t.Fatal(every.Bug)
	}
	cas := 0
	for i, tr := range every.Transitions {
		switch acc := tr.Accesses; {
		case len(acc) <= 1:
		case len(acc) == 2 && acc[0].Atomic && !acc[0].Write && acc[1].Atomic && acc[1].Write && acc[0].Addr == acc[1].Addr:
			cas++
		default:
			t.Fatalf("transition %d (thread %d): %d accesses %v", i, tr.Thread, len(acc), acc)
		}
	}
	if cas != 12*4 {
		t.Errorf("%d successful compare-and-swaps as one event, want 48 (12 threads × 4 messages)", cas)
	}
	plain := play(t, img, Config{Args: args}, schedule.NewRandom(3))
	most := 0
	for _, tr := range plain.Transitions {
		most = max(most, len(tr.Accesses))
	}
	if most < 8 || len(plain.Transitions) >= len(every.Transitions) {
		t.Errorf("without EveryAccess: %d transitions, at most %d accesses in one; with it %d", len(plain.Transitions), most, len(every.Transitions))
	}
}

// TestPthreadCallsAreNoSpin: a thread that locks and unlocks a mutex 25
// times in a row (posix/locked_counter) is never taken for a spin by the
// loop heuristics (a pthread call is progress; its mutex accesses are
// the kernel's), under random schedules.
func TestPthreadCallsAreNoSpin(t *testing.T) {
	img := fixtureImage(t, "posix/locked_counter")
	for seed := uint64(1); seed <= 20; seed++ {
		k, err := New(img, Config{Args: []string{"locked_counter", "3"}})
		if err != nil {
			t.Fatal(err)
		}
		r := schedule.NewRandom(seed)
		for steps := 0; ; steps++ {
			if done, bug := k.Ended(); done {
				if bug != nil {
					t.Fatalf("seed %d: %v", seed, bug)
				}
				break
			}
			if k.st.hblocked != 0 {
				t.Fatalf("seed %d, step %d: a thread is heuristically blocked", seed, steps)
			}
			ch, err := r.Choose(k, steps)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := k.Step(ch); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestPosixStdio: the POSIX stdio.h additions behave as C defines them
// (fixture posix/scan; the same source compiled for the host against
// glibc prints the same lines, stderr unbuffered aside): sscanf's
// conversions, sizes (300 stored by %hhu is 44), widths, scan sets, %*,
// the EOF of an empty input and a matching failure's 0; fprintf to stdout
// and stderr, both the program's output.
func TestPosixStdio(t *testing.T) {
	o := play(t, fixtureImage(t, "posix/scan"), Config{Args: []string{"scan"}}, schedule.Default{})
	if o.Bug != nil {
		t.Fatal(o.Bug)
	}
	want := `n=5 a=42 x=31 l=-7 w=word c=r
empty=-1
nomatch=0 a=42
skip=2 h=34 hh=44
i=63 o=8 i=-16 n=3
width=123 45 n=2
lit=val n=1
short=7 n=1
done
`
	if string(o.Stdout) != want {
		t.Errorf("output:\n%s\nwant:\n%s", o.Stdout, want)
	}
}
