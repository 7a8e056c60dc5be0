package job

import (
	"fmt"
	"slices"
	"testing"

	"landslide/dpor"
	"landslide/kernel"
)

// TestStackSharedThroughPointers: in each mode of posix/stack_share a
// thread stores 1 into another thread's local through a pointer while
// the owner loads it, so the owner sees 0 or 1, whichever comes first.
// The owner's load is an access to its own stack, which the kernel
// leaves out of what it records until a pointer to it escapes (the
// exposure rule): without it, the exploration never orders the load
// after the store, and reaches one outcome. Every strategy must reach
// both, as full enumeration does: mode 1 with every shared access a PP
// and with the pthread calls alone; mode 2 with every shared access a PP
// (with the pthread calls alone, the worker's publication and load are
// one transition, as they would be with a global in place of the local).
func TestStackSharedThroughPointers(t *testing.T) {
	_, img := image(t, "posix/stack_share")
	want := []string{`exit 0: "seen 0\n"`, `exit 0: "seen 1\n"`}
	for _, mode := range []string{"1", "2"} {
		for _, every := range []bool{true, false} {
			if mode == "2" && !every {
				continue
			}
			for _, strategy := range []string{"full", "dpor", "optimal"} {
				name := fmt.Sprintf("mode %s, every access %v, %s", mode, every, strategy)
				kc := kernel.Config{Args: []string{"stack_share", mode}}
				if every {
					kc.EveryAccess, kc.MaxPPs = true, kernel.TooDeepPreemptEverywhere
				}
				res, got := explored(t, img, kc, dpor.Options{Spec: dpor.Spec{Strategy: strategy}})
				if !res.Complete || !slices.Equal(keys(got), want) {
					t.Errorf("%s: complete %v, outcomes %q, want %q", name, res.Complete, keys(got), want)
				}
			}
		}
	}
}

// TestThreadLocalStorage: posix/tls's threads each see their own copy of
// its thread-local variables, initialised from the image (mode 1: any
// thread that saw another's update fails an assertion; every strategy
// verifies it), and a thread-local variable whose address escapes is
// ordered like shared memory (mode 2: main reads the worker's v through
// a pointer and sees the value before or after the worker's store, as
// full enumeration does). glibc's errno (posix/glibc_errno, through
// __errno_location) is one per thread the same way: no interleaving
// shows a thread another's value.
func TestThreadLocalStorage(t *testing.T) {
	for _, c := range []struct {
		prog, mode string
		want       []string
	}{
		{"posix/tls", "1", []string{`exit 0: "ok\n"`}},
		{"posix/tls", "2", []string{`exit 0: "seen 3\n"`, `exit 0: "seen 4\n"`}},
		{"posix/glibc_errno", "", []string{`exit 0: "ok\n"`}},
	} {
		_, img := image(t, c.prog)
		for _, strategy := range []string{"full", "dpor", "optimal"} {
			kc := kernel.Config{Args: []string{"tls", c.mode}, EveryAccess: true, MaxPPs: kernel.TooDeepPreemptEverywhere}
			res, got := explored(t, img, kc, dpor.Options{Spec: dpor.Spec{Strategy: strategy}})
			if !res.Complete || !slices.Equal(keys(got), c.want) {
				t.Errorf("%s mode %s, %s: complete %v, outcomes %q, want %q", c.prog, c.mode, strategy, res.Complete, keys(got), c.want)
			}
		}
	}
}
