package job

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"landslide/dpor"
	"landslide/kernel"
	"landslide/linearize"
	"landslide/race"
	"landslide/record"
	"landslide/report"
	"landslide/store"
)

// Persistence defaults.
const (
	DefaultCommitEvery     = 2000            // interleavings
	DefaultCommitInterval  = 2 * time.Second // wall time
	DefaultCheckpointEvery = 64              // PPs along a branch
)

// Persist makes a job durable: its frontier, race analysis, interleavings,
// race candidates and bug go to a store in batches, so that a crash loses
// at most the work since the last commit and Resume continues from there.
type Persist struct {
	Store *store.Store
	Run   *store.Run
	Job   int // the job's number within the run (1 for explore)
	// Every and Interval: commit after this many interleavings or this
	// much wall time, whichever comes first (defaults above).
	Every    int
	Interval time.Duration
	// CheckpointEvery: at each commit, store the machine's state at every
	// multiple of this depth on the current branch (once per prefix), so
	// that resuming or replaying a deep prefix starts there rather than at
	// the program's start. Negative: no checkpoints.
	CheckpointEvery int
	// NoBranchLog leaves the interleavings out of the store (offline race
	// analysis needs them).
	NoBranchLog bool
	// Resume continues the job from its last commit (Run then needs the
	// store's spec, see Resume).
	Resume bool
	// OnCommit, when set, sees each commit's statistics.
	OnCommit func(store.CommitStats)
	// Spec, when set, is the job's own stored configuration (a Quicksand
	// job's PP set differs from the run's); it names the job's machine
	// for checkpoints. Default: the run's Spec.
	Spec *Spec
	// Attach, when set, sees each commit as it is prepared, before it is
	// written (in the same batch), and may add to it: Quicksand puts its
	// own state in c.Run so that the job table and the job's frontier
	// never disagree in the store. final is the job's result on its last
	// commit, nil before.
	Attach func(c *store.Commit, final *Result)
}

// specVersion versions the encoding of Spec, frontiers and race states.
const specVersion = 1

type envelope struct {
	Version int
	Value   msgpack.RawMessage
}

func encode(v any) ([]byte, error) {
	raw, err := msgpack.Marshal(v)
	if err != nil {
		return nil, err
	}
	return msgpack.Marshal(envelope{Version: specVersion, Value: raw})
}

func decode(b []byte, what string, v any) error {
	var e envelope
	if err := store.CheckMsgpack(b); err != nil {
		return fmt.Errorf("stored %s: %w", what, err)
	}
	if err := msgpack.Unmarshal(b, &e); err != nil {
		return fmt.Errorf("stored %s: %w", what, err)
	}
	if e.Version != specVersion {
		return fmt.Errorf("stored %s: encoding version %d, this landslide reads %d", what, e.Version, specVersion)
	}
	if err := msgpack.Unmarshal(e.Value, v); err != nil {
		return fmt.Errorf("stored %s: %w", what, err)
	}
	return nil
}

// EncodeSpec and DecodeSpec convert a Spec to and from its stored form.
func EncodeSpec(s Spec) ([]byte, error) { return encode(s) }

// DecodeSpec: see EncodeSpec. A spec stored before strategies had names
// (with dpor.Mode and an ICB flag) is read as the same exploration.
func DecodeSpec(b []byte) (Spec, error) {
	var s Spec
	if err := decode(b, "job spec", &s); err != nil {
		return s, err
	}
	if s.Strategy == "" {
		var legacy struct {
			Mode     uint8 // 0 DPOR, 1 full enumeration
			ICB      bool
			MaxBound int
		}
		if err := decode(b, "job spec", &legacy); err != nil {
			return s, err
		}
		s.MaxBound = nil
		switch {
		case legacy.Mode == 1:
			s.Strategy = "full"
		case legacy.ICB:
			s.Strategy = "icb"
			if legacy.MaxBound != dpor.UnlimitedBound {
				s.MaxBound = dpor.Bound(legacy.MaxBound)
			}
		}
	}
	return s, nil
}

// MachineID identifies the machine a spec builds from a binary: equal IDs
// mean equal states after equal choices, so checkpoints are shared.
func MachineID(binary string, s *Spec) string {
	h := sha256.New()
	h.Write([]byte(binary))
	b, _ := msgpack.Marshal(struct {
		K kernel.Config
		E bool
	}{s.Kernel, s.PreemptEverywhere})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// persister is a running job's link to its store.
type persister struct {
	p       *Persist
	j       *runner
	machine string
	ppset   []string // DescribePPs, once
	spec    []byte   // Persist.Spec encoded (nil without one)
	// Pending since the last commit.
	log   *store.BranchLog
	races map[[2]uint64]*race.Candidate
	lastN int
	lastT time.Time
	saved map[[32]byte]bool // checkpoints stored by this process
	// last is the job record of the last commit (nil before the first):
	// a cut job's last commit keeps its counters (commitCut).
	last     *store.Job
	inflight chan error // the result of the commit in flight
	stats    store.CommitStats
	commits  int
	err      error
}

func newPersister(p *Persist, j *runner) (*persister, error) {
	if p.Job == 0 {
		p.Job = 1
	}
	if p.Every <= 0 {
		p.Every = DefaultCommitEvery
	}
	if p.Interval <= 0 {
		p.Interval = DefaultCommitInterval
	}
	if p.CheckpointEvery == 0 {
		p.CheckpointEvery = DefaultCheckpointEvery
	}
	// The machine is named after the run's stored spec (as replay sees
	// it), not j.cfg, which Machine may have completed.
	spec := p.Spec
	var own []byte
	if spec == nil {
		s, err := DecodeSpec(p.Run.Spec)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", p.Run.ID, err)
		}
		spec = &s
	} else {
		var err error
		if own, err = EncodeSpec(*spec); err != nil {
			return nil, err
		}
	}
	return &persister{p: p, j: j, machine: MachineID(p.Run.Binary, spec), spec: own, races: map[[2]uint64]*race.Candidate{},
		lastT: time.Now(), saved: map[[32]byte]bool{}, log: &store.BranchLog{}}, nil
}

// load restores the job's state from its last commit: the frontier (nil
// if the job never committed one), the race analyzer and the stacks of
// the candidates found so far, and the time already spent.
func (ps *persister) load() (*dpor.Frontier, time.Duration, error) {
	st, p := ps.p.Store, ps.p
	jb, err := st.Job(p.Run.ID, p.Job)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	fb, err := st.Frontier(p.Run.ID, p.Job)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	fr := &dpor.Frontier{}
	if err := decode(fb, "frontier", fr); err != nil {
		return nil, 0, err
	}
	// Before revision 1 of the machine (kernel.Semantics), the stored
	// transitions of a TM program lack the reads of transactions that
	// aborted themselves, and DPOR never reversed their races.
	if jb.Semantics < 1 && usesTransactions(fr.Transitions) {
		return nil, 0, fmt.Errorf("%w: run %s job %d: its transactions that aborted themselves were stored without their reads, so the interleavings those reads order were never explored and the job cannot be continued; start a new run", ErrStale, p.Run.ID, p.Job)
	}
	// Before revision 2, an exit was no PP of its own and did not cut the
	// other threads off, and spin loops were blocked by the thesis's
	// counters: the stored transitions are not those this machine runs.
	if jb.Semantics < 2 {
		return nil, 0, fmt.Errorf("%w: run %s job %d: it was explored before exits and spin loops were modelled as they are now (the thesis's loop counters could drop executions), so its stored transitions differ from this machine's and the job cannot be continued; start a new run", ErrStale, p.Run.ID, p.Job)
	}
	// Before revision 4, a thread's accesses to its own stack through a
	// pointer another thread held, and the system calls that look at
	// another thread's run state, ordered nothing: DPOR never reversed
	// their races.
	if jb.Semantics < 4 {
		return nil, 0, fmt.Errorf("%w: run %s job %d: it was explored before a thread's accesses to its own stack through a pointer another thread held, and yield and make_runnable's look at another thread, were dependences, so interleavings they order were never explored and the job cannot be continued; start a new run", ErrStale, p.Run.ID, p.Job)
	}
	if ps.j.cfg.Linearizability && jb.Lineup < linearize.Revision {
		return nil, 0, fmt.Errorf("%w: run %s job %d: its interleavings were checked for linearizability by an earlier rule, which ordered only calls that cannot overlap and so missed violations, and the job cannot be continued; start a new run", ErrStale, p.Run.ID, p.Job)
	}
	ps.j.k.LearnStack(jb.Stack)
	sb, err := st.State(p.Run.ID, p.Job)
	if err != nil {
		return nil, 0, err
	}
	var rs race.State
	if err := decode(sb, "race analysis", &rs); err != nil {
		return nil, 0, err
	}
	if err := ps.j.an.SetState(rs); err != nil {
		return nil, 0, err
	}
	rr, err := st.Races(p.Run.ID, p.Job)
	if err != nil {
		return nil, 0, err
	}
	for _, r := range rr {
		ps.j.stacks[r.Candidate.Key()] = [2][]report.Frame{r.StackA, r.StackB}
	}
	ps.lastN = fr.Executed
	ps.commits = jb.Commits
	return fr, time.Duration(jb.Elapsed), nil
}

// ErrStale reports a stored job that an earlier revision of the machine
// (kernel.Semantics) explored, or of the linearizability check
// (linearize.Revision) judged, in a way this one cannot continue.
var ErrStale = errors.New("stored exploration from an earlier landslide")

// usesTransactions reports whether a transition of trs began or aborted a
// transaction.
func usesTransactions(trs []*record.Transition) bool {
	for _, tr := range trs {
		for _, e := range tr.Sync {
			if e.Kind == record.SyncTxnBegin || e.Kind == record.SyncTxnAbort {
				return true
			}
		}
	}
	return false
}

// checkpoint is dpor.Options.Checkpoint: the deepest stored state on the
// way to prefix's end.
func (ps *persister) checkpoint(prefix []record.Choice) (int, record.Snapshot) {
	k := ps.p.CheckpointEvery
	if k <= 0 {
		return 0, nil
	}
	for d := len(prefix) / k * k; d >= k; d -= k {
		rec, err := ps.p.Store.Checkpoint(ps.machine, store.PrefixHash(prefix[:d]))
		if err != nil {
			continue
		}
		snap, err := ps.j.k.DecodeCheckpoint(KernelCheckpoint(rec))
		if err != nil {
			continue // a damaged checkpoint: re-execute instead
		}
		return d, snap
	}
	return 0, nil
}

// KernelCheckpoint converts a stored checkpoint for kernel.DecodeCheckpoint.
func KernelCheckpoint(rec *store.CheckpointRecord) *kernel.Checkpoint {
	c := &kernel.Checkpoint{State: rec.State, Pages: make([]kernel.Page, len(rec.Pages))}
	for i, p := range rec.Pages {
		c.Pages[i] = kernel.Page{Addr: p.Addr, Data: p.Data}
	}
	return c
}

// branch records one interleaving and commits when one is due.
func (ps *persister) branch(b *dpor.Branch, changed []*race.Candidate) {
	if ps.err != nil {
		return
	}
	if !ps.p.NoBranchLog {
		// Encoded now: the transitions become garbage with the branch.
		if err := ps.log.Add(&store.BranchRecord{N: b.N, Div: b.Divergence,
			Transitions: b.Transitions[b.Divergence:], Pairs: b.NewPairs}); err != nil {
			ps.err = err
			return
		}
	}
	for _, c := range changed {
		ps.races[c.Key()] = c
	}
	if b.N-ps.lastN >= ps.p.Every || time.Since(ps.lastT) >= ps.p.Interval {
		ps.err = ps.commit(store.StatusRunning, "", nil, true)
	}
}

// commit writes everything pending, the frontier and the job's counters
// in one batch, now or,
// in the background (async) while the exploration goes on: what it
// writes is captured first, and the next commit waits for it.
func (ps *persister) commit(status store.Status, message string, res *Result, async bool) error {
	if err := ps.wait(); err != nil {
		return err
	}
	if res != nil && res.Cut {
		return ps.commitCut(status, res)
	}
	j, p := ps.j, ps.p
	fr := j.x.Frontier()
	state := j.an.State()
	// A job's last commit is flushed: its results no longer depend on
	// the write-ahead log.
	c := &store.Commit{Log: ps.log, Flush: res != nil}
	est := j.x.Estimate()
	if ps.ppset == nil {
		ps.ppset = DescribePPs(j.k, j.cfg)
	}
	jb := &store.Job{Run: p.Run.ID, ID: p.Job, PPSet: ps.ppset, Status: status,
		Interleavings: fr.Branches, Executed: fr.Executed, Transitions: fr.Steps, Budgeted: fr.Budgeted,
		Bound: fr.Bound, EstSize: est.Size, EstProportion: est.Proportion, EstTotal: int64(est.Total),
		Elapsed: int64(j.now()), Commits: ps.commits, Spec: ps.spec, Stack: j.k.SharedStackSeen(), Semantics: kernel.Semantics,
		Lineup: linearize.Revision}
	if res != nil {
		jb.Complete, jb.Bounded = res.Complete, res.Bounded
	}
	c.Job = jb
	last := *jb
	ps.last = &last
	keys := make([][2]uint64, 0, len(ps.races))
	for k := range ps.races {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]uint64) int {
		if a[0] != b[0] {
			return compare(a[0], b[0])
		}
		return compare(a[1], b[1])
	})
	for _, k := range keys {
		st := j.stacks[k]
		c.Races = append(c.Races, &store.RaceRecord{Run: p.Run.ID, Job: p.Job, Candidate: *ps.races[k],
			StackA: st[0], StackB: st[1], Data: j.names[k]})
	}
	if res != nil && res.BugBranch != nil {
		tr, bug := ps.bugRecords(res)
		c.Traces, c.Bugs = []*store.TraceRecord{tr}, []*store.BugRecord{bug}
	}
	if k := p.CheckpointEvery; k > 0 {
		for d := k; d < len(fr.Nodes) && d <= len(fr.Choices); d += k {
			h := store.PrefixHash(fr.Choices[:d])
			if ps.saved[h] {
				continue
			}
			if have, err := p.Store.HasCheckpoint(ps.machine, h); err != nil {
				return err
			} else if have { // stored by the run this one resumes
				ps.saved[h] = true
				continue
			}
			snap, err := j.x.SnapshotAt(d)
			if err != nil {
				return err
			}
			kc, err := j.k.EncodeCheckpoint(snap)
			if err != nil {
				return err
			}
			rec := &store.CheckpointRecord{Machine: ps.machine, Prefix: h, Depth: d, State: kc.State}
			for _, pg := range kc.Pages {
				// A copy: the commit may be written in the background,
				// after the search released the node's snapshot, whose
				// pages are then reused (emu/mem M5).
				rec.Pages = append(rec.Pages, store.PageRecord{Addr: pg.Addr, Data: slices.Clone(pg.Data)})
			}
			c.Checkpoints = append(c.Checkpoints, rec)
			ps.saved[h] = true
		}
	}
	run := *p.Run
	run.Status, run.Message = status, message
	if status == store.StatusRunning {
		run.Message = fmt.Sprintf("%d interleavings so far", fr.Executed)
	}
	c.Run = &run
	if p.Attach != nil {
		p.Attach(c, res)
	}
	ps.log, ps.lastN, ps.lastT = &store.BranchLog{}, fr.Executed, time.Now()
	clear(ps.races)
	if async {
		ps.inflight = make(chan error, 1)
		go ps.writeAsync(c, fr, state)
		return nil
	}
	if err := ps.write(c, fr, state); err != nil {
		return err
	}
	*p.Run = run
	return nil
}

// commitCut is the last commit of a job cut inside an execution at its
// budget (Result.Cut): the explorer is inside that execution, so the
// store keeps the frontier, race state and counters of the last commit
// (a resume explores on from there, as after a crash: the interleavings
// since then, and their races, are explored again, not stored twice),
// and records the job's end: its status and the time it spent.
func (ps *persister) commitCut(status store.Status, res *Result) error {
	p := ps.p
	if ps.last == nil {
		// No commit in this process: the job's record in the store is
		// the last commit's (a resumed job's, from the run it resumes),
		// or none yet.
		switch stored, err := p.Store.Job(p.Run.ID, p.Job); {
		case err == nil:
			ps.last = stored
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	if ps.ppset == nil {
		ps.ppset = DescribePPs(ps.j.k, ps.j.cfg)
	}
	jb := &store.Job{Run: p.Run.ID, ID: p.Job, PPSet: ps.ppset, Spec: ps.spec, Semantics: kernel.Semantics, Lineup: linearize.Revision}
	if ps.last != nil {
		l := *ps.last
		jb = &l
	}
	jb.Status, jb.Commits, jb.Elapsed, jb.Complete = status, ps.commits, int64(ps.j.now()), false
	why := "the time budget ran out"
	if res.Stopped == dpor.StopCanceled {
		why = "it was interrupted"
	}
	message := fmt.Sprintf("%s after %d interleavings stored; %s inside the next execution, which a resume explores again",
		res.Stopped, jb.Executed, why)
	c := &store.Commit{Job: jb, Flush: true}
	if res.BugBranch != nil {
		tr, bug := ps.bugRecords(res)
		c.Traces, c.Bugs = []*store.TraceRecord{tr}, []*store.BugRecord{bug}
	}
	run := *p.Run
	run.Status, run.Message = status, message
	c.Run = &run
	if p.Attach != nil {
		p.Attach(c, res)
	}
	ps.log = &store.BranchLog{}
	clear(ps.races)
	if err := ps.put(c); err != nil {
		return err
	}
	*p.Run = run
	return nil
}

// write encodes the frontier and the race state into c and commits it.
func (ps *persister) write(c *store.Commit, fr *dpor.Frontier, state race.State) error {
	var err error
	if c.Frontier, err = encode(fr); err != nil {
		return err
	}
	if c.State, err = encode(state); err != nil {
		return err
	}
	return ps.put(c)
}

// put commits c and counts it.
func (ps *persister) put(c *store.Commit) error {
	stats, err := ps.p.Store.CommitWithStats(c)
	if err != nil {
		return err
	}
	ps.commits++
	addStats(&ps.stats, stats)
	if ps.p.OnCommit != nil {
		ps.p.OnCommit(stats)
	}
	return nil
}

// writeAsync is write in the background; wait collects its result.
func (ps *persister) writeAsync(c *store.Commit, fr *dpor.Frontier, state race.State) {
	ps.inflight <- ps.write(c, fr, state)
}

// wait waits for the commit in flight, if any, and returns its error.
func (ps *persister) wait() error {
	if ps.inflight == nil {
		return nil
	}
	err := <-ps.inflight
	ps.inflight = nil
	return err
}

func addStats(t *store.CommitStats, s store.CommitStats) {
	t.Bytes += s.Bytes
	t.Branches += s.Branches
	t.BranchBytes += s.BranchBytes
	t.Checkpoints += s.Checkpoints
	t.CheckpointBytes += s.CheckpointBytes
	t.PagesNew += s.PagesNew
	t.PagesShared += s.PagesShared
}

func compare(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// bugRecords are the stored trace and bug of the failing branch.
func (ps *persister) bugRecords(res *Result) (*store.TraceRecord, *store.BugRecord) {
	b, p := res.BugBranch, ps.p
	tr := &store.TraceRecord{Run: p.Run.ID, Job: p.Job, ID: 1, Kind: "bug", Choices: slices.Clone(b.Choices),
		Transitions: slices.Clone(b.Transitions), Preempted: slices.Clone(b.Preempted)}
	for i := range b.Transitions {
		tr.Hashes = append(tr.Hashes, record.Hash(b.Transitions[i:i+1]))
	}
	bug := &store.BugRecord{Run: p.Run.ID, Job: p.Job, Trace: tr.ID, Kind: b.Bug.Kind, Message: b.Bug.Message,
		Thread: b.Bug.Thread, PC: b.Bug.PC}
	bug.Funcs, bug.Signature = Signature(ps.j.syms, b.Bug)
	return tr, bug
}

// Signature is a bug's deduplication key: its kind, the failing
// location as function+offset, and the function names of its stack. The
// failing location is the instruction that failed, or, where that is in
// a function that reports a failure (reportingFuncs: an assertion's
// panic, abort), the call of it in the first frame outside them, so
// that two assertions in one program, or in two, do not share one key.
func Signature(syms interface {
	FuncAt(pc uint64) (string, uint64, bool)
}, b *record.Bug) ([]string, string) {
	var funcs []string
	pcs := make([]uint64, len(b.Stack))
	for i, pc := range b.Stack {
		if i > 0 && pc >= 4 {
			pc -= 4 // a return address: the call is what names the frame (a noreturn call may end its function)
		}
		pcs[i] = pc
		name, _, ok := syms.FuncAt(pc)
		if !ok {
			name = "?"
		}
		funcs = append(funcs, name)
	}
	at := b.PC
	for i := 0; i+1 < len(funcs) && slices.Contains(reportingFuncs, funcs[i]); i++ {
		at = pcs[i+1]
	}
	name, start, ok := syms.FuncAt(at)
	off := at - start
	if !ok {
		name, off = "?", at
	}
	return funcs, store.Signature(b.Kind, name, off, funcs)
}

// reportingFuncs are the SDK's functions that report a failure on behalf
// of their caller (assert expands to a call of panic).
var reportingFuncs = []string{"panic", "abort"}

// finish writes the job's final state.
func (ps *persister) finish(res *Result) error {
	if ps.err != nil {
		return ps.err
	}
	if err := ps.wait(); err != nil {
		return err
	}
	status, msg := res.Status()
	return ps.commit(status, msg, res, false)
}

// Status is the job's stored status and the sentence that says it.
func (r *Result) Status() (store.Status, string) {
	switch {
	case r.Bug != nil:
		return store.StatusBug, fmt.Sprintf("%s: %s", r.Bug.Kind, r.Bug.Message)
	case r.Verified && r.Caveat != "":
		return store.StatusVerified, fmt.Sprintf("verified: %d interleavings; caveat: %s", r.Interleavings, r.Caveat)
	case r.Verified && r.Fallback != "":
		return store.StatusVerified, fmt.Sprintf("verified: %d interleavings of the dpor strategy (optimal DPOR fell back: %s)", r.Interleavings, r.Fallback)
	case r.Verified:
		return store.StatusVerified, fmt.Sprintf("verified: %d interleavings", r.Interleavings)
	case r.Restricted && r.Bound >= dpor.UnlimitedBound:
		return store.StatusBounded, fmt.Sprintf("no bug in the race-reversal walks: every candidate run (%d walks)", r.Executed)
	case r.Restricted:
		return store.StatusBounded, fmt.Sprintf("no bug with preemptions only before atomic instructions, within %d (%d interleavings)", r.Bound, r.Interleavings)
	case r.Bounded:
		return store.StatusBounded, fmt.Sprintf("no bug within %d preemptions (%d interleavings)", r.Bound, r.Interleavings)
	case r.Stopped == dpor.StopCheckerLimit:
		return store.StatusLimit, fmt.Sprintf("%s; interleaving %d went past it, and the exploration stopped there", r.Limit.Message, r.Executed)
	case r.Complete && r.Budgeted > 0:
		return store.StatusBudget, fmt.Sprintf("%d of %d interleavings ran out of the instruction budget", r.Budgeted, r.Executed)
	case r.Stopped == dpor.StopControl || r.Stopped == dpor.StopCanceled:
		return store.StatusStopped, fmt.Sprintf("%s after %d interleavings", r.Stopped, r.Executed)
	}
	return store.StatusBudget, fmt.Sprintf("%s after %d interleavings", r.Stopped, r.Executed)
}
