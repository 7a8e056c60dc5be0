package quicksand

import (
	"fmt"
	"math"
	"slices"
	"time"

	"landslide/record"
)

// Status is where a job is in its lifecycle (thesis §4.4, the digest's
// §7.6).
type Status uint8

// The job statuses.
const (
	Pending    Status = iota // not started
	Running                  // on a worker
	Suspended                // deferred: its ETA did not fit; its state is in the store
	Complete                 // the state space completed with no bug
	BugFound                 // the state space holds a bug
	Cancelled                // a subset found a bug, or (-M) it is no longer maximal
	TimedOut                 // the budget ran out before it completed
	NotStarted               // the run ended (its budget spent, or its first bug with --first-bug) before it started
	// LimitReached: an execution went past a limit of the checker
	// (threads, memory, output): no bug, but its state space cannot
	// complete. The other jobs go on; the run is no verification.
	LimitReached
)

var statusNames = [...]string{"pending", "running", "suspended", "complete", "bug", "cancelled", "timed out", "not started", "limit"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", s)
}

// Done reports whether the job will not run again.
func (s Status) Done() bool { return s >= Complete }

// Job is one state space: a PP set explored with DPOR.
type Job struct {
	// ID numbers the jobs from 1 in the order they were added (the store's
	// job numbers); the job is Jobs[ID-1].
	ID  int `msgpack:"id"`
	Set Set `msgpack:"set"`
	// Reproduces: its data-race candidates spawn jobs. The {yield} seed
	// and the small jobs do not.
	Reproduces bool   `msgpack:"repro"`
	Origin     string `msgpack:"origin"`
	Status     Status `msgpack:"status"`
	// Started: the job has run before, so its state is in the store and
	// it resumes from there.
	Started bool `msgpack:"started"`
	// Interleavings so far; ETA in clock units (+Inf when unknown) and the
	// estimated proportion explored, as of its last report.
	Interleavings int     `msgpack:"n"`
	ETA           float64 `msgpack:"eta"`
	Proportion    float64 `msgpack:"prop"`
	// SinceStart counts the interleavings since it was last (re)started.
	SinceStart int `msgpack:"since"`
	// Bug is the bug's one-line description (BugFound).
	Bug string `msgpack:"bug,omitempty"`
	// Limit says which checker limit an execution went past and what
	// raises it (LimitReached).
	Limit string `msgpack:"limit,omitempty"`
	// Discovered holds the data-race PPs this job has reported, so that a
	// repeated report spawns nothing.
	Discovered Set `msgpack:"disc,omitempty"`
	// Note says why it was cancelled or how it ended, for the report.
	Note string `msgpack:"note,omitempty"`
	// Suspensions counts the times it was suspended.
	Suspensions int `msgpack:"susp,omitempty"`
	// Interrupted: it was running when the run was interrupted (Status
	// Suspended); a resumed run restarts it first (Sched.Interrupt).
	Interrupted bool `msgpack:"intr,omitempty"`
	// FoundAt is the clock when it found its bug (time to the bug).
	FoundAt time.Duration `msgpack:"found,omitempty"`
	// SharedStack are the shared stack locations the job records (the
	// run's, as of its first start).
	SharedStack []uint64 `msgpack:"stack,omitempty"`
	// Caveat: its strategy may not have explored every trace of its
	// state space, and why (Outcome.Caveat; the verdict repeats it).
	Caveat string `msgpack:"caveat,omitempty"`
	// Walk: the job is no state space but the bug a walk found
	// (walk.go): which walk, and the PPs beyond Set it had.
	Walk *WalkInfo `msgpack:"walk,omitempty"`

	stop bool // tell the runner to stop at its next report
}

// Options are Quicksand's scheduling parameters: data, stored with the
// run. The zero value of every field but Budget is its default; where
// "none" differs from the default, it is a negative value.
type Options struct {
	// Budget is the time the run may take, in clock units (wall time, or
	// interleavings with the deterministic clock). Required.
	Budget time.Duration
	// ETAFactor scales the remaining budget before comparing a job's ETA
	// with it (the paper's HeuristicETAFactor; 0: DefaultETAFactor).
	ETAFactor float64
	// ETAThreshold: a job is not suspended before this many interleavings
	// since it (re)started (0: DefaultETAThreshold; negative: none).
	ETAThreshold int
	// HomeStretch: no job is suspended once less than this much budget is
	// left (the source's 60 s; starting another job would not pay off).
	// 0: DefaultHomeStretch with the wall clock, none with the
	// interleaving clock; negative: none.
	HomeStretch time.Duration
	// Maximal is the thesis's -M: one job, always the maximal state space
	// (Algorithm 1).
	Maximal bool
	// Control is the thesis's -C: one job with every sync PP, no jobs
	// from data races.
	Control bool
	// FirstBug ends the run at the first bug (running jobs stop, pending
	// ones time out) instead of looking for more.
	FirstBug bool `msgpack:"first_bug,omitempty"`
	// Workers explore jobs at once (the thesis's -c; 0: one).
	Workers int `msgpack:"workers"`
	// Deterministic makes the clock count interleavings instead of wall
	// time: Budget, HomeStretch and ETAs are in interleavings (a job's ETA
	// is its estimated size minus what it explored), so a run depends on
	// nothing but the program. It needs one worker.
	Deterministic bool `msgpack:"det"`
	// WalkShare is the share of the run's time given to walks over
	// the largest PP set known (walk.go; beyond the thesis): 0 is
	// DefaultWalkShare, negative none. -M and -C run none. A stored run
	// keeps its value; one stored before walks existed holds 0 and runs
	// none.
	WalkShare float64 `msgpack:"walk_share,omitempty"`
	// WalkSlice is the length of a slice of walks, in clock units (0: a
	// hundredth of the budget, at least 250 ms or 16 walks, at most 30 s
	// or 1,000 walks); WalkDepth the PCT depth d (0: 3); WalkSeed the
	// first PCT slice's seed (PCT slice k has WalkSeed+k-1).
	WalkSlice time.Duration `msgpack:"walk_slice,omitempty"`
	WalkDepth int           `msgpack:"walk_depth,omitempty"`
	WalkSeed  uint64        `msgpack:"walk_seed,omitempty"`
}

// Defaults of Options.
const (
	DefaultETAFactor    = 2
	DefaultETAThreshold = 32
	DefaultHomeStretch  = 60 * time.Second
)

// WithDefaults is o with each unset field set to its default (a stored
// run keeps these, so a later change of a default does not change how
// it resumes).
func (o Options) WithDefaults() Options {
	if o.ETAFactor == 0 {
		o.ETAFactor = DefaultETAFactor
	}
	if o.ETAThreshold == 0 {
		o.ETAThreshold = DefaultETAThreshold
	}
	if o.HomeStretch == 0 {
		o.HomeStretch = DefaultHomeStretch
		if o.Deterministic {
			o.HomeStretch = -1
		}
	}
	if o.Workers == 0 {
		o.Workers = 1
	}
	switch {
	case o.Maximal || o.Control:
		o.WalkShare = -1 // the thesis's modes, and the controls, as they were
	case o.WalkShare == 0:
		o.WalkShare = DefaultWalkShare
	}
	if o.WalkShare > 0 {
		if o.WalkSlice == 0 {
			o.WalkSlice = defaultWalkSlice(o.Budget, o.Deterministic)
		}
		if o.WalkDepth == 0 {
			o.WalkDepth = defaultWalkDepth
		}
	}
	return o
}

// Race is a data-race candidate a job reported, as Quicksand sees it:
// the two racing instructions, in the order seen.
type Race struct {
	PCA       uint64 `msgpack:"a"`
	PCB       uint64 `msgpack:"b"`
	WhereA    string `msgpack:"wa,omitempty"`
	WhereB    string `msgpack:"wb,omitempty"`
	BothOrder bool   `msgpack:"both"`
	// FirstInterleaving: seen on the job's first interleaving (the
	// thesis's "deterministic"; otherwise nondeterministic).
	FirstInterleaving bool `msgpack:"first"`
	// Realloc: the free-then-re-malloc pattern; never spawns a job.
	Realloc bool `msgpack:"realloc"`
	// BothHalves: a PP goes at both accesses even if the race was seen
	// in one order (under weak atomicity, a transactional access racing
	// with a non-transactional one: thesis §6.2.4).
	BothHalves bool `msgpack:"halves,omitempty"`
	// Atomic: an atomic conflict (two atomic accesses the happens-before
	// leaves unordered: race.Analyzer.Conflicts), not a data race. It
	// adds jobs as a race does, at the lowest priority, and is noted and
	// reported apart (Sched.Conflicts).
	Atomic bool `msgpack:"atomic,omitempty"`
}

// RaceNote is a race Quicksand was told about, once per pair.
type RaceNote struct {
	Race `msgpack:"race"`
	Job  int `msgpack:"job"` // the first job that reported it
}

// Decision is the answer to a running job's report.
type Decision uint8

// The decisions.
const (
	Continue Decision = iota
	Suspend           // stop and keep the state in the store: another job is more promising
	Stop              // stop for good: time is up, a subset found a bug, or (-M) not maximal
)

// Sched is Quicksand's state: the PPs, the jobs and the race candidates,
// and the decisions of the paper's Algorithms 1-3 over them. It is plain
// data (it is what the store keeps of a Quicksand run) and not safe for
// concurrent use; Run serialises access to it.
type Sched struct {
	Opt   Options    `msgpack:"opt"`
	Reg   Registry   `msgpack:"reg"`
	Jobs  []*Job     `msgpack:"jobs"`
	Races []RaceNote `msgpack:"races"`
	// Conflicts are the atomic conflicts, as Races are the data races.
	Conflicts []RaceNote `msgpack:"conflicts,omitempty"`
	// Now is the clock as of the last event (clock units).
	Now time.Duration `msgpack:"now"`
	// CPU and Wall are the process CPU time and the wall time the run has
	// taken, the runs it resumed included (for its core saturation; with
	// the interleaving clock Now is no time).
	CPU  time.Duration `msgpack:"cpu,omitempty"`
	Wall time.Duration `msgpack:"wall,omitempty"`
	// Walks is what the walks did (walk.go).
	Walks Walks `msgpack:"walks,omitempty"`
	// SharedStack are the stack locations (8-byte granules, sorted) that
	// the ended jobs saw another thread than their owner access: the
	// jobs started later record their owners' accesses there too, so a
	// race on a wait node on a thread's stack can become a PP (the way
	// race candidates become PPs; none of this exists under -C, which
	// runs one job).
	SharedStack []uint64 `msgpack:"stack,omitempty"`

	// noteIdx indexes Races (0) and Conflicts (1) by their PC pair
	// (rebuilt when it lags: after decoding, it is empty). A program
	// with racing loops reports a million candidates in one
	// interleaving (SCTBench's micro_10_ok), and a linear search per
	// note took minutes.
	noteIdx [2]map[[2]uint64]int
}

// learnStack merges a job's shared stack locations into the run's.
func (s *Sched) learnStack(gs []uint64) {
	for _, g := range gs {
		if i, found := slices.BinarySearch(s.SharedStack, g); !found {
			s.SharedStack = slices.Insert(s.SharedStack, i, g)
		}
	}
}

// New seeds a scheduler with the thesis's user-space seed jobs over the
// sync PPs (§4.2.2): { }, each sync PP alone, and all of them (the maximal
// set, required for soundness). -M and -C seed only the maximal set.
func New(opt Options, syncPPs []string) *Sched {
	s := &Sched{Opt: opt.WithDefaults()}
	var all Set
	for _, fn := range syncPPs {
		prio := PrioOther
		switch fn {
		case record.MutexLock.String():
			prio = PrioLock
		case record.MutexUnlock.String():
			prio = PrioUnlock
		}
		all = all.With(s.Reg.Sync(fn, prio))
	}
	if opt.Maximal || opt.Control {
		s.add(all, !opt.Control, "seed (maximal)")
		return s
	}
	if len(syncPPs) == 0 {
		// No sync functions (a POSIX program: its pthread calls are PPs
		// of every set): { } is the maximal seed.
		s.add(Set{}, true, "seed (maximal)")
		return s
	}
	s.add(Set{}, false, "seed")
	if len(syncPPs) > 1 {
		for _, id := range all.IDs() {
			s.add(Of(id), true, "seed")
		}
	}
	s.add(all, true, "seed (maximal)")
	return s
}

func (s *Sched) add(set Set, repro bool, origin string) *Job {
	j := &Job{ID: len(s.Jobs) + 1, Set: set, Reproduces: repro, Origin: origin, ETA: math.Inf(1)}
	s.Jobs = append(s.Jobs, j)
	return j
}

func (s *Sched) find(set Set) *Job {
	for _, j := range s.Jobs {
		if j.Walk == nil && j.Set.Equal(set) {
			return j
		}
	}
	return nil
}

// covers reports whether a job (not a cancelled one, which explored
// nothing for its own sake) already has set or a superset of it: Algorithm
// 2's line 1, PPSet(j0) ∪ {α} ⊄ PPSet(j) for all j. (The source's
// equality test would also add every subset of a job already there.)
func (s *Sched) covers(set Set) bool {
	for _, j := range s.Jobs {
		if j.Status != Cancelled && j.Walk == nil && set.SubsetOf(j.Set) {
			return true
		}
	}
	return false
}

// bugFound reports whether a job whose set is a subset of set found a bug
// (the source's bug_already_found).
func (s *Sched) bugFound(set Set) bool {
	for _, j := range s.Jobs {
		if j.Status == BugFound && j.subsetOf(set) {
			return true
		}
	}
	return false
}

// remaining is the budget left, T in the paper (none once the first bug
// ends a FirstBug run).
func (s *Sched) remaining() time.Duration {
	if s.Opt.FirstBug && len(s.Bugs()) > 0 {
		return 0
	}
	return s.Opt.Budget - s.Now
}

// unexploredPriority is the most urgent priority among a job's PPs that no
// completed reproducing job has explored (the source's
// unexplored_priority). A job with a PP at an atomic conflict not yet
// explored ranks as that PP unless a data-race PP ranks it higher: its
// sync PPs do not (beyond the thesis, where there are no such PPs), so
// that every job with a data-race PP, a lock or an unlock to explore,
// and no atomic conflict, runs before it.
func (s *Sched) unexploredPriority(j *Job) Priority {
	if j.Set.Len() == 0 {
		return PrioEmpty
	}
	p, races, atomic := PrioExplored, PrioExplored, false
	for _, id := range j.Set.IDs() {
		if pp := &s.Reg.PPs[id]; !pp.Explored {
			p = min(p, pp.Priority)
			if pp.IsRace() {
				races = min(races, pp.Priority)
				atomic = atomic || pp.Atomic
			}
		}
	}
	if atomic {
		return races
	}
	return p
}

func (s *Sched) byStatus(st Status) []*Job {
	var out []*Job
	for _, j := range s.Jobs {
		if j.Status == st {
			out = append(out, j)
		}
	}
	return out
}

// pending is P: the pending jobs, most urgent first (priority, then the
// smaller set, then the older job).
func (s *Sched) pending() []*Job {
	p := s.byStatus(Pending)
	slices.SortStableFunc(p, func(a, b *Job) int {
		if pa, pb := s.unexploredPriority(a), s.unexploredPriority(b); pa != pb {
			return int(pa) - int(pb)
		}
		if la, lb := a.Set.Len(), b.Set.Len(); la != lb {
			return la - lb
		}
		return a.ID - b.ID
	})
	return p
}

// suspended is S: the suspended jobs by increasing ETA (then age).
func (s *Sched) suspended() []*Job {
	p := s.byStatus(Suspended)
	slices.SortStableFunc(p, func(a, b *Job) int {
		if a.ETA != b.ETA {
			if a.ETA < b.ETA {
				return -1
			}
			return 1
		}
		return a.ID - b.ID
	})
	return p
}

// holdsBack reports whether job a, running or suspended, holds back job
// b under Algorithm 3's subset rule: b's set contains a's, so b would
// take at least as long. The empty set holds back no job: it is a subset
// of every set, so the rule would make it hold back the whole run; with
// one worker, a suspended {} seed (which spawns no jobs) would leave no
// other job to run, and a running one would see no better job.
func holdsBack(a, b *Job) bool {
	return a.Set.Len() > 0 && a.Set.SubsetOf(b.Set)
}

// hasSuspendedSubset reports whether some other suspended job's set is a
// subset of j's: then j would take at least as long, so it waits.
func (s *Sched) hasSuspendedSubset(j *Job, susp []*Job) bool {
	for _, o := range susp {
		if o != j && holdsBack(o, j) {
			return true
		}
	}
	return false
}

// Next is the job a free worker should run, or nil: the most urgent
// pending job that is not a superset of a suspended job, else the
// suspended job with the lowest ETA that has no suspended subset.
func (s *Sched) Next() *Job {
	for _, j := range s.Jobs {
		if !j.Status.Done() && j.Status != Running && s.bugFound(j.Set) {
			j.Status = Cancelled // a subset's bug (seen again after a resume)
		}
	}
	susp := s.suspended()
	for _, j := range s.pending() {
		if !s.hasSuspendedSubset(j, susp) {
			return j
		}
	}
	for _, j := range susp {
		if !s.hasSuspendedSubset(j, susp) {
			return j
		}
	}
	return nil
}

// Start marks a job as running on a worker. A job the run's interruption
// stopped goes on as if it had not stopped: its interleavings since its
// start still count towards the ETA threshold.
func (s *Sched) Start(j *Job) {
	if !j.Interrupted {
		j.SinceStart = 0
	}
	j.Status, j.Interrupted, j.stop = Running, false, false
}

// better is Algorithm 3's search for a job more likely to finish than the
// running j0 (lines 4-17), nil if there is none.
func (s *Sched) better(j0 *Job) *Job {
	susp := s.suspended()
	for _, jp := range s.pending() {
		// A pending superset of j0 would take at least as long (the
		// source's should_work_block ignores them); one with a suspended
		// subset likewise.
		if holdsBack(j0, jp) || s.hasSuspendedSubset(jp, susp) {
			continue
		}
		return jp
	}
	for _, js := range susp {
		if !j0.Set.ProperSubsetOf(js.Set) && j0.ETA > js.ETA && !s.hasSuspendedSubset(js, susp) {
			return js // ETA inversion: trust the suspended subset's estimate
		}
	}
	return nil
}

// Progress takes a running job's report after an interleaving (its
// interleavings so far, its ETA in clock units, +Inf if unknown, and the
// estimated proportion explored) at clock time now, and decides whether
// it goes on (Algorithm 3, with the thresholds of §4.2.4).
func (s *Sched) Progress(j *Job, interleavings int, eta float64, proportion float64, now time.Duration) Decision {
	s.Now = max(s.Now, now)
	j.SinceStart += interleavings - j.Interleavings
	j.Interleavings, j.ETA, j.Proportion = interleavings, eta, proportion
	switch {
	case j.stop:
		return Stop
	case s.remaining() <= 0:
		return Stop
	case s.Opt.Maximal && !j.Set.Equal(s.Reg.All()):
		j.Note = "no longer maximal"
		return Stop
	case j.SinceStart < s.Opt.ETAThreshold:
		return Continue
	case s.remaining() <= s.Opt.HomeStretch: // none when not positive (remaining > 0 here)
		return Continue
	case eta < s.Opt.ETAFactor*float64(s.remaining()):
		return Continue // line 1: expected to finish
	}
	if s.better(j) == nil {
		return Continue
	}
	return Suspend
}

// Suspended records that a job stopped on Suspend.
func (s *Sched) Suspended(j *Job) {
	j.Status, j.Started = Suspended, true
	j.Suspensions++
}

// Interrupt records that the run's interruption stopped a running job:
// it waits like a suspended one, but a resumed run restarts it first,
// where it was (the scheduler did not decide to stop it).
func (s *Sched) Interrupt(j *Job) {
	j.Status, j.Started, j.Interrupted = Suspended, true, true
}

// Finished records how a job's exploration ended: complete (no bug), a
// bug, or stopped (Stop: time up, cancelled, or no longer maximal).
func (s *Sched) Finished(j *Job, complete bool, bug string) {
	s.finished(j, complete, bug, "")
}

// LimitReached records that an execution of job j went past a checker
// limit (limit says which): the job ends, and the others go on (unlike
// a bug's, its supersets are not cancelled: they may find a bug first).
func (s *Sched) LimitReached(j *Job, limit string) { s.finished(j, false, "", limit) }

func (s *Sched) finished(j *Job, complete bool, bug, limit string) {
	j.Started = true
	switch {
	case limit != "" && bug == "":
		j.Status, j.Limit = LimitReached, limit
	case bug != "":
		j.Status, j.Bug, j.FoundAt = BugFound, bug, s.Now
		// A bug cancels every superset job (§4.2.4): they might find only
		// the same bug.
		for _, o := range s.Jobs {
			if o != j && !o.Status.Done() && j.subsetOf(o.Set) {
				o.Note = fmt.Sprintf("job %d, a subset, found a bug", j.ID)
				if o.Status == Running {
					o.stop = true
				} else {
					o.Status = Cancelled
				}
			}
		}
	case complete:
		j.Status, j.Proportion, j.ETA = Complete, 1, 0
		if j.Reproduces {
			for _, id := range j.Set.IDs() {
				s.Reg.PPs[id].Explored = true
			}
		}
	case j.stop || (s.Opt.Maximal && !j.Set.Equal(s.Reg.All())):
		j.Status = Cancelled
	case s.Opt.FirstBug && len(s.Bugs()) > 0 && s.Now < s.Opt.Budget:
		// Another job's or a walk's bug ended the run while this one ran
		// (as TimeUp says of the suspended jobs).
		j.Status, j.Note = Cancelled, "the first bug ended the run"
	default:
		j.Status = TimedOut
	}
}

// TimeUp ends the jobs that did not run to the end. Pending jobs never
// started; suspended ones are cancelled when the first bug ended a
// FirstBug run with budget left (the budget was not what stopped them),
// else they time out.
func (s *Sched) TimeUp() {
	firstBug := s.Opt.FirstBug && len(s.Bugs()) > 0 && s.Now < s.Opt.Budget
	for _, j := range s.Jobs {
		switch {
		case j.Status == Pending && firstBug:
			j.Status, j.Note = NotStarted, "first bug found"
		case j.Status == Suspended && firstBug:
			j.Status, j.Note = Cancelled, "the first bug ended the run"
		case j.Status == Pending:
			j.Status, j.Note = NotStarted, "the budget ran out first"
		case j.Status == Suspended:
			j.Status = TimedOut
		}
	}
}

// Maximal returns the job whose set holds every known PP (the maximal
// state space), nil if there is none yet.
func (s *Sched) Maximal() *Job {
	all := s.Reg.All()
	var best *Job
	for _, j := range s.Jobs {
		if j.Walk == nil && all.SubsetOf(j.Set) && (best == nil || j.Status == Complete) {
			best = j
		}
	}
	return best
}

// OnRace takes a data-race candidate or an atomic conflict (r.Atomic)
// reported by running job j0 and adds the jobs Algorithm 2 calls for
// (Algorithm 1 under -M): for each racing instruction α new to j0, the
// "big" job PPSet(j0) ∪ {α} unless a job with that set or a superset
// exists, and the "small" job {α} unless one exists. Only both-order
// races add both instructions (single-order ones the first; the second
// follows if the race turns both-order); reallocation candidates,
// reports of non-reproducing jobs and -C add none. An atomic conflict's
// PPs rank after every other (PrioAtomicBoth, PrioAtomicSingle). It
// returns the jobs added.
func (s *Sched) OnRace(j0 *Job, r Race) []*Job {
	s.note(j0, r)
	if r.Realloc || s.Opt.Control || !j0.Reproduces {
		return nil
	}
	prio := PrioSingleOrder
	if r.Atomic {
		prio = PrioAtomicSingle
	}
	pcs := []uint64{r.PCA}
	where := []string{r.WhereA}
	switch {
	case r.BothOrder && r.Atomic:
		prio = PrioAtomicBoth
	case r.BothOrder:
		prio = PrioBothOrder
	}
	if (r.BothOrder || r.BothHalves) && r.PCB != r.PCA {
		pcs, where = append(pcs, r.PCB), append(where, r.WhereB)
	}
	if s.noChange(j0, r, pcs, prio) || s.bugFound(j0.Set) {
		return nil
	}
	var added []*Job
	ids := make([]int, len(pcs))
	fresh := make([]bool, len(pcs))
	for i, pc := range pcs {
		ids[i], fresh[i] = s.Reg.Race(pc, where[i], prio, r.Atomic)
		if r.FirstInterleaving {
			s.Reg.PPs[ids[i]].Deterministic = true
		}
	}
	for i, id := range ids {
		if j0.Set.Has(id) || j0.Discovered.Has(id) {
			continue
		}
		j0.Discovered = j0.Discovered.With(id)
		if s.Opt.Maximal {
			if all := s.Reg.All(); s.find(all) == nil {
				added = append(added, s.add(all, true, fmt.Sprintf("maximal, after job %d's race", j0.ID)))
			}
			continue
		}
		if big := j0.Set.With(id); !s.covers(big) && !s.bugFound(big) {
			added = append(added, s.add(big, true, fmt.Sprintf("big, from job %d", j0.ID)))
		}
		if small := Of(id); fresh[i] && j0.Set.Len() > 0 && s.find(small) == nil {
			added = append(added, s.add(small, false, fmt.Sprintf("small, from job %d", j0.ID)))
		}
	}
	return added
}

// noChange reports whether race r, with PPs at pcs of priority prio,
// would change nothing: each PP is registered, at that priority or a
// more urgent one, with the flags r would give it, and j0 holds or has
// discovered it. (The common case, checked first: one interleaving may
// report a million candidates among a few thousand instructions.)
func (s *Sched) noChange(j0 *Job, r Race, pcs []uint64, prio Priority) bool {
	for _, pc := range pcs {
		id := s.Reg.ID(pc)
		if id < 0 {
			return false
		}
		p := &s.Reg.PPs[id]
		if p.Priority > prio || (p.Atomic && !r.Atomic) || (r.FirstInterleaving && !p.Deterministic) ||
			!(j0.Set.Has(id) || j0.Discovered.Has(id)) {
			return false
		}
	}
	return true
}

func (s *Sched) note(j0 *Job, r Race) {
	notes, k := &s.Races, 0
	if r.Atomic {
		notes, k = &s.Conflicts, 1
	}
	idx := s.noteIdx[k]
	if idx == nil || len(idx) != len(*notes) {
		idx = make(map[[2]uint64]int, len(*notes))
		for i, n := range *notes {
			if _, ok := idx[[2]uint64{n.PCA, n.PCB}]; !ok {
				idx[[2]uint64{n.PCA, n.PCB}] = i
			}
		}
		s.noteIdx[k] = idx
	}
	key := [2]uint64{r.PCA, r.PCB}
	if i, ok := idx[key]; ok {
		// Re-reports only strengthen a note.
		n := &(*notes)[i]
		n.BothOrder = n.BothOrder || r.BothOrder
		n.FirstInterleaving = n.FirstInterleaving || r.FirstInterleaving
		n.BothHalves = n.BothHalves || r.BothHalves
		n.Realloc = n.Realloc && r.Realloc
		return
	}
	idx[key] = len(*notes)
	*notes = append(*notes, RaceNote{Race: r, Job: j0.ID})
}

// Idle reports whether no job is running, pending or resumable.
func (s *Sched) Idle() bool {
	for _, j := range s.Jobs {
		if !j.Status.Done() {
			return false
		}
	}
	return true
}

// Verified reports total verification: no job found a bug or went past
// a checker limit (LimitReached), a job whose set holds every known PP
// (the maximal state space) completed, and every data-race candidate's
// and every atomic conflict's PPs (both accesses of a both-order one,
// the first of a single-order one; reallocation candidates aside) were
// in a completed job's set. Under -C, where races add no PPs, a race
// candidate or an atomic conflict therefore rules it out: that control
// verifies only programs where neither exists, as the thesis counts it
// for races.
func (s *Sched) Verified() bool {
	all := s.Reg.All()
	ok := false
	for _, j := range s.Jobs {
		if j.Status == BugFound || j.Status == LimitReached {
			return false // a limit: that state space could not complete
		}
		if j.Status == Complete && all.SubsetOf(j.Set) {
			ok = true
		}
	}
	return ok && len(s.UncoveredRaces()) == 0 && len(s.UncoveredConflicts()) == 0
}

// covered is the union of the completed jobs' sets.
func (s *Sched) covered() Set {
	var c Set
	for _, j := range s.Jobs {
		if j.Status == Complete {
			for _, id := range j.Set.IDs() {
				c = c.With(id)
			}
		}
	}
	return c
}

// UncoveredRaces lists the race candidates (not reallocation ones) with a
// PP Algorithm 2 would add that no completed job held (or never added).
func (s *Sched) UncoveredRaces() []RaceNote { return s.uncovered(s.Races) }

// UncoveredConflicts lists the atomic conflicts likewise.
func (s *Sched) UncoveredConflicts() []RaceNote { return s.uncovered(s.Conflicts) }

func (s *Sched) uncovered(notes []RaceNote) []RaceNote {
	c := s.covered()
	has := func(pc uint64) bool {
		id := s.Reg.ID(pc)
		return id >= 0 && c.Has(id)
	}
	var out []RaceNote
	for _, n := range notes {
		if n.Realloc {
			continue
		}
		if !has(n.PCA) || (n.BothOrder && !has(n.PCB)) {
			out = append(out, n)
		}
	}
	return out
}

// Uncovered lists the data-race PPs that no completed job's set held,
// nor a job's that found a bug (that PP has its report already): races
// left for the user to inspect. UncoveredAtomic lists the PPs at atomic
// conflicts likewise.
func (s *Sched) Uncovered() []int { return s.uncoveredPPs(false) }

// UncoveredAtomic: see Uncovered.
func (s *Sched) UncoveredAtomic() []int { return s.uncoveredPPs(true) }

func (s *Sched) uncoveredPPs(atomic bool) []int {
	c := s.covered()
	for _, j := range s.Jobs {
		if j.Status == BugFound {
			for _, id := range j.Set.IDs() {
				c = c.With(id)
			}
		}
	}
	var out []int
	for id := range s.Reg.PPs {
		if p := &s.Reg.PPs[id]; p.IsRace() && p.Atomic == atomic && !c.Has(id) {
			out = append(out, id)
		}
	}
	return out
}

// AtomicPPs lists the PPs at atomic conflicts (no data race named their
// instruction), in the order they were learnt.
func (s *Sched) AtomicPPs() []int {
	var out []int
	for id := range s.Reg.PPs {
		if p := &s.Reg.PPs[id]; p.IsRace() && p.Atomic {
			out = append(out, id)
		}
	}
	return out
}
