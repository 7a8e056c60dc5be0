package check

import (
	"context"
	"fmt"
	"os"
	"testing"

	"landslide/record"
)

// TestSpinLocks: locks that wait by spinning, with every shared access a
// PP. A correct test-and-test-and-set lock (spinning with a relaxed and
// with a seq_cst load), ticket lock and MCS lock verify, their waits
// blocked by the spin-loop rule, with no data-race candidate under either
// HB mode (their release/acquire pairs order the counter they protect);
// before, the thesis's xchg-loop counter and the spinning itself gave
// "infinite loop" bugs and the missing C11 edges 2-6 candidates each.
// Their broken variants are found: a test-then-set entered by two
// threads, a ticket drawn twice, an MCS release that leaves a successor
// spinning for ever (a deadlock).
func TestSpinLocks(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		bug  record.BugKind // 0: verified
	}{
		{"ttas", []string{"2", "2"}, 0},
		{"ttas", []string{"2", "2", "seq_cst"}, 0},
		{"ttas", []string{"3", "1"}, 0},
		{"ticket", []string{"2", "2"}, 0},
		{"mcs", []string{"2", "2"}, 0},
		{"ttas_broken", []string{"2", "1"}, record.BugAssert},
		{"ticket_broken", []string{"2", "1"}, record.BugAssert},
		{"mcs_broken", []string{"2", "1"}, record.BugDeadlock},
	} {
		path := "../fixtures/bin/spin/" + c.name + ".elf"
		image, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pps, err := ResolvePPs(image, PPRequest{EveryAccess: true, Args: append([]string{path}, c.args...)})
		if err != nil {
			t.Fatal(err)
		}
		for _, hb := range []HB{Limited, Pure} {
			label := fmt.Sprintf("%s %v, HB %v", c.name, c.args, hb)
			res, err := Explore(context.Background(), Config{Spec: Spec{Program: path, Kernel: pps.Kernel, HB: hb}, Image: image}, Recording{})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.bug == 0 && (!res.Verified || len(res.Races) != 0):
				t.Errorf("%s: verified %v (bug %v), %d race candidates; want verified with none", label, res.Verified, res.Bug, len(res.Races))
			case c.bug != 0 && (res.Bug == nil || res.Bug.Kind != c.bug):
				t.Errorf("%s: bug %v, want a %s bug", label, res.Bug, c.bug)
			}
		}
	}
}
