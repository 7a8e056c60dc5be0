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
// one write), with the owner's accesses to its own stack where a pointer
// to it escaped (record.Transition.Own); heap allocation and free events
// conflict with each other, and a free conflicts with every access to its
// block (two accesses to one block conflict only byte by byte). A
// thread's run state is a location too, as the Pebbles system calls see
// it (record.SyncRunState): deschedule, a make_runnable that wakes,
// vanish and thread creation write it; yield(tid) and a make_runnable
// that found tid awake read it. A transition that
// ended the program by an exit (record.SyncKill) conflicts with the last
// transition of every other thread (and so, through program order, with
// all of theirs): run earlier it cuts them off, which DPOR reverses as it
// reverses any race. Optimal DPOR's wakeup trees assume every thread runs
// to its end, so that a sleeping thread absent from a wakeup sequence
// still runs in every extension of it (weakInitial); once a branch shows
// an exit that cut a thread off, the strategy stops assuming it, and if it
// already had, explores again from the root (restarter).
//
// The path and its strategies: Explorer is the exploration path (the
// branch as nodes, running a branch, backtracking to the deepest tagged
// node, snapshots, the analysis, the depth heuristic, the frontier). Which
// alternatives to tag after a branch, and which tags to refuse, is a
// Strategy, one file each, registered by name (Spec.Strategy). A strategy
// sees the exploration only through Path (path.go): the branch's nodes,
// transitions, choices and analysis, the machine, and the marks it may
// leave (tags, injected choices, a new walk), each through the explorer's
// filters; it never names the Explorer (TestStrategiesSeeOnlyThePath).
// What the reducing strategies share (events, the thesis's tagging rule,
// lock races, the nets for what a branch never ran) is races.go's. The
// strategies:
//   - dpor (dpor.go; a Spec that names no strategy): the thesis's tagging
//     (is_evil_ancestor / tag_good_sibling / tag_all_siblings): for each
//     race i<j (a conflict not ordered by happens-before; the direct ones,
//     or every pair with Spec.AllPairs), at the node before ti tag T(tj)
//     if it is runnable there, else every runnable thread but T(ti); but
//     where tj happens after a transition between them that does not
//     happen after ti, T(tj) would run another transition there, so a
//     thread that starts that sequence is tagged instead (source sets,
//     Abdulla et al. 2014); with sleep sets (Godefroid: each explored
//     child's transition, as it ran, sleeps in its later siblings'
//     subtrees until a dependent transition) unless Spec.NoSleepSets.
//     Spec.LandslideSleepSets is the thesis's own check
//     (equiv_already_explored) with its tagging alone, to reproduce its
//     figures: it can leave final states out where what a step touches
//     depends on the values it reads (TestStateDependentAccesses);
//   - full (full.go): no reduction, every runnable thread at every PP (the
//     brute-force reference of the tests);
//   - icb (icb.go): iterative context bounding (CHESS), each bound
//     explored completely, from 0 up to Spec.MaxBound or until nothing
//     was dropped (see icb.go for why not DPOR within the bound);
//   - chess-atomic (icb.go): the same, preempting only before atomic
//     accesses; restricted (StrategyInfo.Restricted): a run that left a
//     switch point out ends Bounded with StopRestricted;
//   - cbdpor (cbdpor.go): CB-DPOR (van den Hooff 2014): iterative bounds,
//     DPOR marks on every dependent reversible pair, preemption-only sleep
//     sets;
//   - pct (pct.go): PCT walks of depth Spec.Depth (Burckhardt et al.
//     2010), reproducible from Spec.Seed; never complete;
//   - reversal (reversal.go): race-reversal walks: the default schedule,
//     then one walk per pair of conflicting accesses of two threads, the
//     later one's thread run at the earlier one's PP, from Spec.Seed on;
//     it ends Restricted when the pairs do, never complete;
//   - optimal (optimal.go): optimal DPOR, source sets and wakeup trees
//     (Abdulla et al. 2014), each Mazurkiewicz trace once; the CLI's
//     default (DefaultStrategy), with Spec.Fallback: where a branch shows
//     it not exact on the program (a thread at an _xbegin, an execution
//     ended sleep-set blocked), the explorer replaces it by the dpor
//     strategy and starts again from the root (fallBack; the frontier
//     says so, and Resume continues as the dpor strategy);
//   - random (random.go): seeded random walks, walk k being `landslide run
//     --seed Seed+k-1`; never complete.
//
// Branch.Class names an interleaving's Mazurkiewicz trace (the same for
// equivalent interleavings); Options.Judge may fail an interleaving as a
// whole, after the strategy has branched (the job's linearizability
// check).
//
// Preempt-everywhere (the thesis's -0) is a PP set, chosen by the caller
// through the machine's configuration. Run takes a context: canceling it
// stops the exploration after the current interleaving (StopCanceled).
//
// Persistence: Frontier is the explorer's state between two
// interleavings as plain data, and Resume continues from it in another
// process. The analysis is rebuilt from the stored transitions; a node's
// snapshot is rebuilt only when backtracking needs it, by re-executing
// from the nearest state available (the start, or a checkpoint offered by
// Options.Checkpoint), each transition checked against the stored one.
//
// Transactional memory (htm.go, retry.go): a thread stopped at an
// _xbegin has, besides its transaction, one child per abort status the
// mode allows, a choice with a Value that the path injects and stores
// like a tag; retry sets (the thesis's §6.2.5) constrain those results in
// the subtree of a tag that reverses a race with a transaction. The dpor
// strategy stops a branch at a transaction that aborted itself where an
// injected abort explores the same state (stopAtSelfAbort).
//
// Nondeterministic inputs (nondet.go): a transition that ends at a
// __VERIFIER_nondet call has one variant per value of the call's domain
// (Choice.Value); the path runs them as siblings where the transition
// runs.
//
// Determinism: the exploration order depends only on the machine's
// behaviour (maps are only looked up and merged, never iterated where the
// order matters; no clock decides anything); time only feeds the
// estimates.
package dpor
