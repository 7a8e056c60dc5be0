package quicksand

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// PCT walks (beyond the thesis). Quicksand's jobs explore state spaces
// whole, smallest PP sets first; a bug that needs many threads in one
// particular order (SCTBench's reorder_N: N-1 setters and a checker) sits
// deep in every state space whose PPs can reach it, where depth-first
// DPOR takes too long to get. A bounded share of the run's time
// (Options.WalkShare, one eighth by default) therefore goes to PCT walks
// (dpor's "pct" strategy, as `explore --strategy pct`) over the largest
// PP set known: every PP of the registry (the maximal state space's) and
// the instruction of every data race and atomic conflict any job
// reported, small and { } jobs included. The walks run in slices
// (Options.WalkSlice long), each a fresh PCT exploration of that set
// with its own seed (slice k: WalkSeed+k-1), so that walk w of slice k
// is the same walk whenever the PP set is the same, and a slice is
// replayed by `explore --strategy pct --seed S --depth d` with that PP
// set. A slice runs inside a running job's report (the job waits, its
// machine in memory), when the share allows one more; a worker with no
// job to take runs slices too while other jobs run (wall clock only),
// stopping at the first walk after a job becomes available. A walk's bug
// becomes a job of the run with status BugFound (Job.Walk), reported as
// a job's is (its PP set, trace, replay command); walks never complete
// anything, so they never count towards a verification. With the
// interleaving clock each walk counts one interleaving, the share is of
// interleavings, slices are WalkSlice walks long and start at fixed
// points of the run: the run stays deterministic.
//
// Race-reversal walks (dpor's "reversal" strategy) take every other
// slice until they run out: the default schedule over the same PP set,
// then, one walk each, every thread whose access conflicts with an
// earlier one of another thread run just before that one, top first
// (dpor/reversal.go). PCT finds a bug that needs a few threads in a
// rare order among few steps; reversal walks one that needs one thread
// early among many (SCTBench's twostage_100: one reader between the
// first of 99 writers' two critical sections and any writer's second,
// which PCT hits about once in 60,000 walks and a reversal slice within
// its first ten). Each reversal slice goes on from the candidate where
// the last one stopped (its Seed), or from the first if the PP set
// grew; once the candidates are done, every slice is PCT's until it
// grows. PCT slice k (counting PCT slices only) has seed WalkSeed+k-1.

// DefaultWalkShare is Options.WalkShare's default.
const DefaultWalkShare = 1.0 / 8

// Default walk slice lengths: a hundredth of the budget, within these
// bounds (wall time, or walks with the interleaving clock).
const (
	minWalkSlice     = 250 * time.Millisecond
	maxWalkSlice     = 30 * time.Second
	minWalkSliceDet  = 16
	maxWalkSliceDet  = 1000
	defaultWalkDepth = 3
)

// defaultWalkSlice is a slice's length for a budget (clock units).
func defaultWalkSlice(budget time.Duration, det bool) time.Duration {
	if det {
		return min(max(budget/100, minWalkSliceDet), maxWalkSliceDet)
	}
	return min(max(budget/100, minWalkSlice), maxWalkSlice)
}

// Walks is what the run's walks did, kept with the scheduler.
type Walks struct {
	// Slices started (the next one is Slices+1); Walks run in them.
	Slices int `msgpack:"slices,omitempty"`
	Walks  int `msgpack:"walks,omitempty"`
	// Share is the clock time the slices counted against the share took
	// (interleavings with the interleaving clock); Idle the time of those
	// run by workers that had no job to take.
	Share time.Duration `msgpack:"share,omitempty"`
	Idle  time.Duration `msgpack:"idle,omitempty"`
	// PPs describes the last slice's PP set.
	PPs string `msgpack:"pps,omitempty"`
	// Due: the interruption of the run stopped a slice; the resumed run
	// runs it again first, as the uninterrupted run ran it (interleaving
	// clock).
	Due bool `msgpack:"due,omitempty"`
	// PCT counts the PCT slices started; Reversal is the next reversal
	// candidate (the next reversal slice's seed), ReversalDone that the
	// reversal walks have run out, both over the PP set ReversalPPs (a
	// larger set has other candidates: they start again from the first).
	PCT          int    `msgpack:"pct,omitempty"`
	Reversal     uint64 `msgpack:"reversal,omitempty"`
	ReversalDone bool   `msgpack:"reversal_done,omitempty"`
	ReversalPPs  string `msgpack:"reversal_pps,omitempty"`
}

// Walk kinds (WalkSpec.Kind, WalkInfo.Kind).
const (
	WalkPCT      = "pct"
	WalkReversal = "reversal"
)

// WalkInfo says which walk found a job's bug (Job.Walk).
type WalkInfo struct {
	// Kind is WalkPCT ("" in runs stored before there were others) or
	// WalkReversal; a reversal walk's Seed is its slice's first candidate
	// and its Depth 0.
	Kind  string `msgpack:"kind,omitempty"`
	Slice int    `msgpack:"slice"`
	Seed  uint64 `msgpack:"seed"`
	Depth int    `msgpack:"depth"`
	// Walk is the walk of the slice that found the bug (from 1).
	Walk int `msgpack:"walk"`
	// Extra are the slice's PPs at instructions the registry does not
	// hold (races and conflicts of jobs that spawn none): the job's PP
	// set is Set and these.
	Extra []PP `msgpack:"extra,omitempty"`
}

// WalkSpec is one slice of walks: PCT's (Seed, Depth) or reversal's
// (Seed: the first candidate).
type WalkSpec struct {
	Kind        string
	Slice       int
	Seed        uint64
	Depth       int
	SyncPPs     []string // never nil
	DataRacePCs []uint64 // sorted
	AtomicPCs   []uint64 // those of DataRacePCs at atomic conflicts
	SharedStack []uint64
}

// WalkControl links a slice to Quicksand.
type WalkControl struct {
	// Walk is called after each walk (n so far in the slice, the walk
	// that found a bug included); false ends the slice.
	Walk func(n int) bool
	// Bug records that walk n found a bug (msg: one line) as a job of the
	// run and returns the job's ID and the scheduler's state with it,
	// encoded, to store with the bug's records.
	Bug func(n int, msg string) (id int, state []byte)
	// Exhausted: the slice's reversal walks ran out of candidates.
	Exhausted func()
}

// Walker runs one slice until its control ends it, its first bug, or
// ctx is canceled; it returns the walks it ran.
type Walker func(ctx context.Context, spec WalkSpec, ctl WalkControl) (walks int, err error)

// walkPPs is the largest PP set known: every registered PP, and the
// instructions of the race and conflict notes the registry lacks (those
// Algorithm 2 would make PPs: both of a both-order pair, the first of a
// single-order one; reallocation candidates aside), in the order learnt.
func (s *Sched) walkPPs() (Set, []PP) {
	var extra []PP
	add := func(pc uint64, where string, atomic bool) {
		if s.Reg.ID(pc) >= 0 || slices.ContainsFunc(extra, func(p PP) bool { return p.PC == pc }) {
			return
		}
		extra = append(extra, PP{PC: pc, Where: where, Atomic: atomic})
	}
	for _, notes := range [][]RaceNote{s.Races, s.Conflicts} {
		for _, n := range notes {
			if n.Realloc {
				continue
			}
			add(n.PCA, n.WhereA, n.Atomic)
			if (n.BothOrder || n.BothHalves) && n.PCB != n.PCA {
				add(n.PCB, n.WhereB, n.Atomic)
			}
		}
	}
	return s.Reg.All(), extra
}

// describe prints a set and extra PPs as Registry.Describe does.
func (s *Sched) describe(set Set, extra []PP) string {
	d := s.Reg.Describe(set)
	if len(extra) == 0 {
		return d
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(d, "}"))
	for i := range extra {
		b.WriteString(extra[i].String())
		b.WriteByte(' ')
	}
	b.WriteString("}")
	return b.String()
}

// JobPPs describes job j's PP set (a walk's extra PPs included).
func (s *Sched) JobPPs(j *Job) string {
	if j.Walk != nil {
		return s.describe(j.Set, j.Walk.Extra)
	}
	return s.Reg.Describe(j.Set)
}

// subsetOf reports whether job j's PP set is a subset of set (a walk's
// extra PPs are in no registry set).
func (j *Job) subsetOf(set Set) bool {
	return (j.Walk == nil || len(j.Walk.Extra) == 0) && j.Set.SubsetOf(set)
}

// Describe names the walk: "PCT walk 3 of slice 2 (seed 1, depth 3)".
func (w *WalkInfo) Describe() string {
	if w.Kind == WalkReversal {
		return fmt.Sprintf("race-reversal walk %d of slice %d (from candidate %d)", w.Walk, w.Slice, w.Seed)
	}
	return fmt.Sprintf("PCT walk %d of slice %d (seed %d, depth %d)", w.Walk, w.Slice, w.Seed, w.Depth)
}

// walkBug records the bug walk n of a slice found as a job of the run.
func (s *Sched) walkBug(info WalkInfo, set Set, n int, msg string) *Job {
	info.Walk = n
	j := s.add(set, false, info.Describe())
	j.Walk = &info
	j.Started, j.Interleavings, j.ETA = true, n, 0
	s.finished(j, false, msg, "")
	return j
}

// walking reports whether the run gives time to walks.
func (d *driver) walks() bool {
	return d.cfg.Walker != nil && d.s.Opt.WalkShare > 0
}

// sliceLen is a slice's length in clock units.
func (d *driver) sliceLen() time.Duration {
	if l := d.s.Opt.WalkSlice; l > 0 {
		return l
	}
	return defaultWalkSlice(d.s.Opt.Budget, d.cfg.Deterministic)
}

// walkDue reports whether the share allows one more slice now (with mu
// held): after it, the share's slices would have taken at most WalkShare
// of the workers' time so far (of the interleavings, with the
// interleaving clock).
func (d *driver) walkDue() bool {
	if !d.walks() || d.shareWalking || d.s.remaining() <= 0 {
		return false
	}
	l := d.sliceLen()
	total := float64(d.s.Now)
	if !d.cfg.Deterministic {
		total *= float64(d.cfg.Workers)
	}
	return float64(d.s.Walks.Share+l) <= d.s.Opt.WalkShare*(total+float64(l))
}

// walk runs one slice of walks (with mu held; it is released while the
// walks run). idle: a worker with no job to take runs it, not counted
// against the share, and it ends once a job is available.
func (d *driver) walk(idle bool) {
	w := &d.s.Walks
	before := *w
	w.Slices++
	set, extra := d.s.walkPPs()
	info := WalkInfo{Kind: WalkPCT, Slice: w.Slices, Extra: extra}
	if pps := d.s.describe(set, extra); pps != w.ReversalPPs {
		w.Reversal, w.ReversalDone, w.ReversalPPs = 0, false, pps
	}
	if !w.ReversalDone && w.Slices%2 == 1 {
		info.Kind, info.Seed = WalkReversal, w.Reversal
	} else {
		info.Depth = d.s.Opt.WalkDepth
		if info.Depth == 0 {
			info.Depth = defaultWalkDepth
		}
		info.Seed = d.s.Opt.WalkSeed + uint64(w.PCT)
		w.PCT++
	}
	depth := info.Depth
	funcs, pcs := d.s.Reg.Funcs(set)
	atomic := d.s.Reg.AtomicPCs(set)
	for _, p := range extra {
		pcs = append(pcs, p.PC)
		if p.Atomic {
			atomic = append(atomic, p.PC)
		}
	}
	slices.Sort(pcs)
	slices.Sort(atomic)
	spec := WalkSpec{Kind: info.Kind, Slice: info.Slice, Seed: info.Seed, Depth: depth, SyncPPs: funcs, DataRacePCs: pcs,
		AtomicPCs: atomic, SharedStack: slices.Clone(d.s.SharedStack)}
	w.PPs = d.s.describe(set, extra)
	if !idle {
		d.shareWalking = true
	}
	gen, l := d.gen, d.sliceLen()
	start, rounds0 := d.now(), d.rounds
	last := start
	walks, found, exhausted := 0, false, false
	// spent counts the time since the last count against the share, or
	// as idle (with mu held): as the walks go, so that a commit in the
	// middle of the slice (a walk's bug) holds it.
	spent := func() {
		now := d.now()
		if idle {
			d.s.Walks.Idle += now - last
		} else {
			d.s.Walks.Share += now - last
		}
		last = now
	}
	d.mu.Unlock()
	_, err := d.cfg.Walker(d.ctx, spec, WalkControl{
		Walk: func(n int) bool {
			d.mu.Lock()
			defer d.mu.Unlock()
			walks = n
			d.s.Walks.Walks++
			if d.cfg.Deterministic {
				d.rounds++
			}
			spent()
			d.s.Now = max(d.s.Now, d.now())
			switch {
			case d.err != nil || d.s.remaining() <= 0:
				return false
			case d.cfg.Deterministic:
				return time.Duration(n) < l
			case idle && (d.gen != gen || d.running == 0):
				return false // a job to take, or none left to wait for
			}
			return d.now()-start < l
		},
		Bug: func(n int, msg string) (int, []byte) {
			d.mu.Lock()
			defer d.mu.Unlock()
			found = true
			d.s.Now = max(d.s.Now, d.now())
			j := d.s.walkBug(info, set, n, msg)
			d.gen++
			d.cond.Broadcast()
			d.account()
			b, err := d.s.Encode()
			if err != nil && d.err == nil {
				d.err = err
			}
			return j.ID, b
		},
		Exhausted: func() { exhausted = true },
	})
	d.mu.Lock()
	if !idle {
		d.shareWalking = false
	}
	if err != nil && d.err == nil {
		d.err = fmt.Errorf("%s walks, slice %d: %w", info.Kind, info.Slice, err)
	}
	if d.cfg.Deterministic && d.ctx.Err() != nil && !found && time.Duration(walks) < l && d.s.remaining() > 0 {
		// Interrupted: the resumed run runs this slice again first, so
		// that it goes on as the uninterrupted run would have.
		d.rounds = rounds0
		d.s.Now = time.Duration(rounds0)
		*w = before
		w.Due = true
		return
	}
	if info.Kind == WalkReversal {
		// Walk 1 is the base; walk n >= 2 ran candidate Seed+n-2.
		w.Reversal = info.Seed + uint64(max(walks-1, 0))
		w.ReversalDone = w.ReversalDone || exhausted
	}
	if !d.cfg.Deterministic {
		spent() // the machine's setup and teardown
	}
}
