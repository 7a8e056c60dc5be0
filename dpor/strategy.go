package dpor

import (
	"fmt"
	"slices"
	"strings"

	"landslide/record"
)

// Strategy decides which alternatives the path explores: which threads
// to tag at a node for a later interleaving, which tags to refuse, and
// the preemption bound of each round. The path (Explorer) does everything
// else: running a branch, backtracking to the deepest tagged node,
// snapshots, the happens-before and conflict analysis, the depth
// heuristic, the frontier. A strategy is one file of this package that
// registers itself (register); adding one touches nothing else. It
// sees the exploration only through Path.
//
// A strategy may keep state, but everything that decides the exploration
// must be recoverable from the path (the frontier) and its Spec, so that
// a resumed exploration continues exactly as the uninterrupted one.
type Strategy interface {
	// Bound is the preemption bound of round r of the exploration (0 is
	// the first; UnlimitedBound for none), or false when there is no
	// round r. A new round starts from the root when a round ends with
	// tags its bound dropped.
	Bound(r int) (int, bool)
	// Reached sees the path arrive at a new node i (the root, i = 0,
	// included, at the start of each round).
	Reached(x Path, i int)
	// Pick is the choice to run at the path's last node when no tag is
	// pending there (thread 0: the machine's default choice).
	Pick(x Path) record.Choice
	// Branch sees each completed interleaving (the path at its end) and
	// tags the alternatives it calls for.
	Branch(x Path, br *Branch) error
	// Skip refuses a tag or an injected abort (choice c at node i) that
	// the path would place: a reduction's proof that the subtree is
	// already covered.
	Skip(x Path, i int, c record.Choice) bool
}

// StrategyInfo describes a registered strategy.
type StrategyInfo struct {
	Name string
	Doc  string // one line, for --help
	// Exhaustive: a completed exploration has covered every reachable
	// outcome of the program (the soundness tests check it against
	// full enumeration); a sampling strategy never completes.
	Exhaustive bool
	// Restricted: by design the strategy leaves out switch points of the
	// PP set (CHESS-atomic: all but those before atomic instructions); a
	// completed exploration that left some out is not complete
	// (Result.Restricted).
	Restricted bool
	// Bounded: the strategy explores in rounds of growing preemption
	// bounds (Spec.MaxBound caps them).
	Bounded bool
	new     func(Spec) (Strategy, error)
}

var strategies []StrategyInfo

// register adds a strategy (from its file's init).
func register(name, doc string, exhaustive bool, new func(Spec) (Strategy, error)) {
	registerInfo(StrategyInfo{Name: name, Doc: doc, Exhaustive: exhaustive, new: new})
}

func registerInfo(info StrategyInfo) {
	strategies = append(strategies, info)
	slices.SortFunc(strategies, func(a, b StrategyInfo) int { return strings.Compare(a.Name, b.Name) })
}

// DefaultStrategy is the strategy the CLI runs when none is named:
// optimal DPOR, with Spec.Fallback to the dpor strategy where it is not
// exact. A Spec that names none ("", as the stored specs of explorations
// from before the default changed say) is the dpor strategy
// (specDefault).
const DefaultStrategy = "optimal"

// specDefault is the strategy of a Spec that names none.
const specDefault = "dpor"

// Strategies lists the registered strategies, by name.
func Strategies() []StrategyInfo { return slices.Clone(strategies) }

// NewStrategy builds the strategy s names, checking its parameters.
func NewStrategy(s Spec) (Strategy, error) {
	st, _, err := newStrategy(s)
	return st, err
}

func newStrategy(s Spec) (Strategy, StrategyInfo, error) {
	name := s.Strategy
	if name == "" {
		name = specDefault
	}
	if s.RetrySets && (s.AbortCodes || name == "icb") {
		return nil, StrategyInfo{}, fmt.Errorf("retry sets work with RETRY aborts and DPOR only: not with distinct abort codes or iterative context bounding (the thesis's -R excludes -A and ICB)")
	}
	if s.WeakAtomicity && !s.STM {
		return nil, StrategyInfo{}, fmt.Errorf("weak atomicity needs STM mode: only conflicts between transactions abort them, so there are no RETRY aborts (the thesis's -W requires -S)")
	}
	if s.STM && !s.AbortCodes {
		return nil, StrategyInfo{}, fmt.Errorf("STM mode (no RETRY aborts) needs distinct abort codes: its aborts are the CONFLICT ones (the thesis's -S requires -A)")
	}
	for _, info := range strategies {
		if info.Name == name {
			st, err := info.new(s)
			return st, info, err
		}
	}
	var names []string
	for _, st := range strategies {
		names = append(names, st.Name)
	}
	return nil, StrategyInfo{}, fmt.Errorf("unknown strategy %q (known: %s)", name, strings.Join(names, ", "))
}

// onlyRound0 is the Bound of a strategy without rounds or bound.
func onlyRound0(r int) (int, bool) { return UnlimitedBound, r == 0 }

// tagAll tags every runnable thread at node i (through the filters).
func (x *Explorer) tagAll(i int) {
	for _, q := range x.nodes[i].runnable {
		x.tag(i, q)
	}
}

// onlyParams refuses the Spec parameters that strategy name does not take
// (allowed lists those it does: sleep-sets, all-pairs,
// landslide-sleep-sets, max-bound, seed, depth, fallback).
func onlyParams(s Spec, name string, allowed ...string) error {
	set := []struct {
		param, what string
		given       bool
	}{
		{"sleep-sets", "a sleep-set setting (--no-sleep-sets)", s.NoSleepSets},
		{"all-pairs", "the AllPairs setting", s.AllPairs},
		{"landslide-sleep-sets", "Landslide's sleep-set check", s.LandslideSleepSets},
		{"max-bound", "a preemption bound (--preemption-bound)", s.MaxBound != nil},
		{"seed", "a seed (--seed)", s.Seed != 0},
		{"depth", "a PCT depth (--depth)", s.Depth != 0},
		{"fallback", "a fallback to the dpor strategy", s.Fallback},
	}
	for _, p := range set {
		if p.given && !slices.Contains(allowed, p.param) {
			return fmt.Errorf("the %s strategy does not take %s", name, p.what)
		}
	}
	return nil
}

// restarter is a strategy that may ask, after a branch, to explore the
// state space again from the root (optimal DPOR, when it learns that the
// program can end with threads alive: optimalStrategy.restartNow).
type restarter interface{ restartNow() bool }

// cutOff reports whether the branch ended with an exit that cut another
// thread off (a record.SyncKill with threads alive).
func (x *Explorer) cutOff() bool {
	n := len(x.trs)
	if n == 0 {
		return false
	}
	for _, e := range x.trs[n-1].Sync {
		if e.Kind == record.SyncKill && e.Arg > 0 {
			return true
		}
	}
	return false
}
