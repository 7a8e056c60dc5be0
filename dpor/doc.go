// Package dpor explores the interleavings of a record.Machine
// systematically: stateless model checking with dynamic partial-order
// reduction as Landslide does it (thesis §3.4.2, §3.4.5; digest
// "landslide-thesis-algorithms-quicksand.md" §2–3 and §6).
//
// The explorer keeps the current branch as a path of nodes, one per PP:
// the machine's snapshot there, the runnable threads, the thread run, the
// children explored and those tagged for exploration, and the preemptions
// used so far. After each complete interleaving it tags alternatives and
// continues from the deepest node with a tagged, unexplored child by
// restoring that node's snapshot: the prefix is never re-executed.
//
// Dependence and happens-before are the thesis's (after Flanagan and
// Godefroid 2005, without the state-commutativity clause): two transitions
// are dependent when one thread ran both, or when the first flipped the
// second's thread between runnable and blocked; happens-before (i →S j) is
// the transitive closure, kept as one vector clock per transition. Memory
// conflicts come from the transitions' access sets (byte ranges, at least
// one write); heap allocation and free events conflict with each other,
// and a free conflicts with every access to its block.
//
// Tagging (is_evil_ancestor / tag_good_sibling / tag_all_siblings): for
// each conflicting pair i<j not ordered by happens-before, at the node
// before ti tag T(tj) if it is runnable there, else every runnable thread
// but T(ti). Filters before a tag is placed:
//   - the sleep-set check (on by default; equiv_already_explored): if,
//     walking up from that node through transitions independent of the
//     tagged thread's next transition, an ancestor already explored that
//     thread, the subtree is equivalent to one already tested;
//   - iterative context bounding (ICB, optional): every runnable thread
//     is tagged at every PP where the bound allows it (CHESS's ICB), and a
//     choice needing more preemptions than the bound is dropped; the bound
//     grows from 0 until nothing was dropped (or a cap is reached). The
//     thesis prunes within the bound with DPOR and BPOR (Coons et al.
//     2013); our implementation of that missed interleavings within the
//     bound on random programs (TestICBBoundedSoundness), so ICB here is
//     complete for each bound instead, at the cost of less pruning. Sleep
//     sets are off under a bound for the same reason.
//
// Modes: DPOR (default), Full (no reduction: every runnable thread at
// every PP; the brute-force reference of the tests) and the same with the
// ICB bound. Preempt-everywhere (the thesis's -0) is a PP set, chosen by
// the caller through the machine's configuration.
//
// Persistence: Frontier is the explorer's state between two
// interleavings as plain data, and Resume continues from it in another
// process. The analysis is rebuilt from the stored transitions; a node's
// snapshot is rebuilt only when backtracking needs it, by re-executing
// from the nearest state available (the start, or a checkpoint offered by
// Options.Checkpoint), each transition checked against the stored one.
//
// Determinism: the exploration order depends only on the machine's
// behaviour (no maps are iterated, no clock decides anything); time only
// feeds the estimates.
package dpor
