// Package minimize explains a bug trace: it finds the same bug with the
// fewest preemptions, and the nearest interleaving where the bug does
// not happen (thesis §5.3.3 and §8.1: students found traces "hard to
// read", and asked for a minimal pass/fail difference).
//
// The same bug is a bug of the same signature (job.Signature: its kind
// and failing location). Minimization explores the job's own state space
// (its PP set, limits and machine) by iterative context bounding, which
// runs every interleaving with at most 0, then 1, ... preemptions, each
// bound completely (dpor's icb), up to the original trace's count, and
// stops at the first interleaving with the bug. Its preemptions are the
// fewest any interleaving of the PP set needs: every interleaving with
// fewer was run in the rounds before, unless the search ran out of its
// budget first (Result.Proved says which).
//
// The nearest passing interleaving reverses one pair of conflicting
// accesses of the minimal trace (transitions i < j of different threads
// touching a common byte, one writing it): at i's PP, the thread of j
// runs first, up to and including its access, and the rest of the trace
// follows in its order as far as the threads can run, then the machine's
// default schedule. A reversal after which the program ends without a
// bug shows what the bug needs: "thread 2's write of balance
// (bank.c:15) to come after thread 3's read of balance (bank.c:13)". Of
// the passing reversals, the one that moves the fewest transitions is
// named, the latest in the trace first among equals: the last ordering
// the failure depends on.
package minimize
