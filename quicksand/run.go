package quicksand

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"landslide/estimator"
)

// JobSpec is what a Runner needs to explore one job.
type JobSpec struct {
	ID          int
	SyncPPs     []string // never nil: empty means no sync PPs
	DataRacePCs []uint64 // sorted
	// AtomicPCs are those of DataRacePCs at atomic conflicts (no data
	// race named them), for the reports.
	AtomicPCs []uint64
	// SharedStack are the stack locations whose owners' accesses the job
	// records (fixed at its first start, so a resumed job explores the
	// same state space).
	SharedStack []uint64
	// Resume: the job ran before; continue from its state in the store.
	Resume bool
}

// Step is a job's report after one interleaving.
type Step struct {
	Interleavings int
	Estimate      estimator.Estimate
	Races         []Race
}

// Outcome is how a job's exploration ended.
type Outcome struct {
	Complete bool
	Bug      string // one line; empty without a bug
	// Limit: an execution went past a checker limit (one line: which,
	// and what raises it); the job cannot complete. Empty otherwise.
	Limit string
	// SharedStack are the stack locations another thread than their
	// owner accessed (sorted): the jobs started after this one record
	// their owners' accesses too (JobSpec.SharedStack).
	SharedStack []uint64
	// Interrupted: the run's context was canceled while the job ran; it
	// stays resumable (Suspended), as if the scheduler had suspended it.
	Interrupted bool
	// Caveat, if set, says why the job's strategy may not have explored
	// every trace of its state space (dpor.Result.Caveat): Job.Caveat.
	Caveat string
}

// Control links a running job to Quicksand.
type Control struct {
	// Step takes the job's report after each interleaving; anything but
	// Continue means stop now (the exploration stays resumable).
	Step func(Step) Decision
	// State is Quicksand's state, encoded, to store with each of the job's
	// commits (in the same batch), as of the commit; final is the job's
	// outcome on its last commit (nil before).
	State func(final *Outcome) []byte
}

// Runner explores one job until it ends or its Control stops it. It runs
// on a worker goroutine; several run at once with more than one worker.
type Runner func(ctx context.Context, spec JobSpec, ctl Control) (*Outcome, error)

// Config is a Quicksand run.
type Config struct {
	Options
	SyncPPs []string
	Runner  Runner
	// Walker runs the walks (walk.go); nil: none.
	Walker Walker
	// Now is the wall clock since the run began (default: real time),
	// including the time of the runs this one resumes.
	Now func() time.Duration
	// CPU, when set, is the CPU time this process has spent since Run
	// began; the stored state accumulates it across resumes (Sched.CPU).
	CPU func() time.Duration
	// Resume continues a stored run: its state as State returned it.
	Resume []byte
	// OnReport, when set, is called every Interval (wall time) and at the
	// end with a snapshot of the jobs; OnRace when a race adds a
	// data-race PP.
	Interval time.Duration
	OnReport func(*Sched)
	OnRace   func(s *Sched, j *Job, pp int, r Race)
}

// ErrConfig is a contradictory configuration.
var ErrConfig = errors.New("quicksand: bad configuration")

// stateVersion versions the encoding of the stored state.
const stateVersion = 1

type stored struct {
	Version int    `msgpack:"v"`
	Sched   *Sched `msgpack:"sched"`
}

// Encode is the scheduler's stored form.
func (s *Sched) Encode() ([]byte, error) {
	return msgpack.Marshal(stored{Version: stateVersion, Sched: s})
}

// Decode reads a stored scheduler, checking it is one this version
// understands and is internally consistent.
func Decode(b []byte) (*Sched, error) {
	var st stored
	if err := msgpack.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("stored Quicksand state: %w", err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("stored Quicksand state: version %d, this landslide reads %d", st.Version, stateVersion)
	}
	s := st.Sched
	if s == nil {
		return nil, errors.New("stored Quicksand state: empty")
	}
	n := len(s.Reg.PPs)
	for i, j := range s.Jobs {
		if j == nil || j.ID != i+1 || j.Status > LimitReached {
			return nil, fmt.Errorf("stored Quicksand state: job %d malformed", i)
		}
		for _, id := range append(j.Set.IDs(), j.Discovered.IDs()...) {
			if id >= n {
				return nil, fmt.Errorf("stored Quicksand state: job %d names PP %d of %d", i, id, n)
			}
		}
	}
	return s, nil
}

// Result is how a Quicksand run ended.
type Result struct {
	Sched *Sched
	// Elapsed is the clock at the end; Busy the workers' time spent
	// running jobs (wall clock), for the core saturation.
	Elapsed, Busy time.Duration
	// Interrupted: the context was canceled before the run ended; its
	// jobs are left as they stood, resumable.
	Interrupted bool
}

type driver struct {
	cfg     Config
	ctx     context.Context
	mu      sync.Mutex
	cond    *sync.Cond
	s       *Sched
	running int
	err     error
	rounds  int64 // deterministic clock
	busy    time.Duration
	// gen counts the events that may give an idle worker a job (jobs
	// added, ended, suspended): an idle worker's walks stop when it moves.
	gen int
	// shareWalking: a slice counted against the share is running.
	shareWalking bool
	// start is when this Run began; cpu0 and wall0 the CPU and wall time
	// of the runs it resumes.
	start       time.Time
	cpu0, wall0 time.Duration
}

// account brings the run's CPU and wall time up to date (with mu held).
func (d *driver) account() {
	d.s.Wall = d.wall0 + time.Since(d.start)
	if d.cfg.CPU != nil {
		d.s.CPU = d.cpu0 + d.cfg.CPU()
	}
}

// Run runs Quicksand: workers take jobs from the scheduler until every
// job has ended, the budget is spent, or ctx is canceled (then the
// running jobs, given ctx, stop at their next interleaving and are left
// suspended, and Result.Interrupted is set).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Workers == 0 {
		cfg.Workers = 1
	}
	if cfg.Workers < 1 {
		return nil, fmt.Errorf("%w: %d workers", ErrConfig, cfg.Workers)
	}
	if cfg.Deterministic && cfg.Workers != 1 {
		return nil, fmt.Errorf("%w: the interleaving clock needs one worker (with more, the order of their reports would decide)", ErrConfig)
	}
	if cfg.Maximal && cfg.Control {
		return nil, fmt.Errorf("%w: maximal mode and the control mode exclude each other", ErrConfig)
	}
	if cfg.Budget <= 0 {
		return nil, fmt.Errorf("%w: the budget must be positive", ErrConfig)
	}
	d := &driver{cfg: cfg, ctx: ctx}
	d.cond = sync.NewCond(&d.mu)
	if cfg.Resume != nil {
		s, err := Decode(cfg.Resume)
		if err != nil {
			return nil, err
		}
		s.Opt.Budget = cfg.Budget // a resume may extend the budget
		d.s = s
		d.rounds = int64(s.Now)
		if s.Opt.Deterministic != cfg.Deterministic {
			return nil, fmt.Errorf("%w: the stored run counts time differently", ErrConfig)
		}
	} else {
		d.s = New(cfg.Options, cfg.SyncPPs)
	}
	d.s.Opt.Workers, d.s.Opt.Deterministic = cfg.Workers, cfg.Deterministic
	if cfg.Resume != nil && d.s.remaining() > 0 {
		// A run whose budget ran out, resumed with a larger one: the jobs
		// it timed out or never started are due again.
		for _, j := range d.s.Jobs {
			if j.Status == TimedOut || j.Status == NotStarted {
				j.Status = Pending
				if j.Started {
					j.Status = Suspended
				}
			}
		}
	}
	if !cfg.Deterministic && cfg.Now == nil {
		start, before := time.Now(), d.s.Now
		d.cfg.Now = func() time.Duration { return before + time.Since(start) }
	}
	d.start, d.cpu0, d.wall0 = time.Now(), d.s.CPU, d.s.Wall
	// Jobs that were running when the stored run stopped (a crash left
	// them Running, an interruption Interrupted) go first, in order, as
	// they would have gone on.
	var resume []*Job
	for _, j := range d.s.Jobs {
		if j.Status == Running || j.Interrupted {
			d.s.Interrupt(j)
			resume = append(resume, j)
		}
	}
	stopReports := d.reports()
	var wg sync.WaitGroup
	for w := 0; w < cfg.Workers; w++ {
		var first *Job
		if w < len(resume) {
			first = resume[w]
		}
		due := w == 0 && d.s.Walks.Due
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.worker(first, due)
		}()
	}
	wg.Wait()
	stopReports()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return nil, d.err
	}
	d.s.Now = d.now()
	d.account()
	if d.s.remaining() <= 0 {
		d.s.TimeUp()
	}
	if d.cfg.OnReport != nil {
		d.cfg.OnReport(d.s)
	}
	return &Result{Sched: d.s, Elapsed: d.s.Now, Busy: d.busy, Interrupted: ctx.Err() != nil}, nil
}

// now is the clock (with mu held).
func (d *driver) now() time.Duration {
	if d.cfg.Deterministic {
		return time.Duration(d.rounds)
	}
	return d.cfg.Now()
}

// reports calls OnReport every Interval until the returned func is called.
func (d *driver) reports() func() {
	if d.cfg.OnReport == nil || d.cfg.Interval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(d.cfg.Interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				d.mu.Lock()
				d.s.Now = max(d.s.Now, d.now())
				d.cfg.OnReport(d.s)
				d.mu.Unlock()
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (d *driver) worker(first *Job, due bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if due && d.walks() {
		// The slice the run's interruption stopped, first, as the
		// uninterrupted run ran it before going on.
		d.s.Walks.Due = false
		d.walk(false)
	}
	for d.err == nil {
		j := first
		first = nil
		d.s.Now = max(d.s.Now, d.now())
		if d.s.remaining() <= 0 || d.ctx.Err() != nil {
			break
		}
		if j == nil {
			j = d.s.Next()
		}
		if j == nil {
			if d.running == 0 {
				break // nothing left, and nothing running that could add jobs
			}
			if d.walks() && !d.cfg.Deterministic {
				d.walk(true) // rather than idle
				continue
			}
			d.cond.Wait()
			continue
		}
		spec := d.spec(j) // Resume if it ran before
		d.s.Start(j)
		j.Started = true
		d.running++
		t0 := time.Now()
		d.mu.Unlock()
		out, err := d.cfg.Runner(d.ctx, spec, Control{
			Step:  func(st Step) Decision { return d.step(j, st) },
			State: func(final *Outcome) []byte { return d.state(j, final) },
		})
		d.mu.Lock()
		d.busy += time.Since(t0)
		d.running--
		if err != nil && d.err == nil {
			d.err = fmt.Errorf("job %d: %w", j.ID, err)
		}
		if err == nil {
			d.end(j, out)
		}
		d.gen++
		d.cond.Broadcast()
	}
	d.cond.Broadcast()
}

// spec is job j's configuration (with mu held).
func (d *driver) spec(j *Job) JobSpec {
	funcs, pcs := d.s.Reg.Funcs(j.Set)
	if !j.Started && j.SharedStack == nil {
		j.SharedStack = slices.Clone(d.s.SharedStack)
	}
	return JobSpec{ID: j.ID, SyncPPs: funcs, DataRacePCs: pcs, AtomicPCs: d.s.Reg.AtomicPCs(j.Set), SharedStack: j.SharedStack, Resume: j.Started}
}

// end applies a job's outcome once (the job's last commit may have
// applied it already), with mu held.
func (d *driver) end(j *Job, out *Outcome) {
	if j.Status != Running {
		return
	}
	if out == nil {
		out = &Outcome{}
	}
	if out.Caveat != "" {
		j.Caveat = out.Caveat
	}
	d.s.Now = max(d.s.Now, d.now())
	d.s.learnStack(out.SharedStack)
	if out.Interrupted && out.Bug == "" && out.Limit == "" && !out.Complete {
		d.s.Interrupt(j)
		return
	}
	if out.Limit != "" && out.Bug == "" {
		d.s.LimitReached(j, out.Limit)
		return
	}
	d.s.Finished(j, out.Complete, out.Bug)
}

// step is a running job's report.
func (d *driver) step(j *Job, st Step) Decision {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return Stop // another job failed (a store error): the run ends
	}
	if d.cfg.Deterministic {
		d.rounds++
	}
	for _, r := range st.Races {
		before := len(d.s.Reg.PPs)
		if len(d.s.OnRace(j, r)) > 0 {
			d.gen++
		}
		if d.cfg.OnRace != nil {
			for id := before; id < len(d.s.Reg.PPs); id++ {
				d.cfg.OnRace(d.s, j, id, r)
			}
		}
	}
	if len(st.Races) > 0 {
		d.cond.Broadcast() // new jobs for idle workers
	}
	dec := d.s.Progress(j, st.Interleavings, d.eta(st), st.Estimate.Proportion, d.now())
	if dec == Suspend {
		d.s.Suspended(j)
		d.gen++
	}
	if dec == Continue && d.walkDue() {
		// The job waits, its machine in memory, while the share's next
		// slice of walks runs on its worker.
		d.walk(false)
		switch {
		case d.err != nil || j.stop || d.s.remaining() <= 0:
			return Stop // a walk's bug ended the run or cancelled this job, or time is up
		}
	}
	return dec
}

// eta is a job's ETA in clock units, +Inf while unknown.
func (d *driver) eta(st Step) float64 {
	e := st.Estimate
	if e.Proportion <= 0 || math.IsNaN(e.Size) || math.IsInf(e.Size, 0) {
		return math.Inf(1)
	}
	if d.cfg.Deterministic {
		return max(0, e.Size-float64(st.Interleavings))
	}
	if e.Total <= 0 {
		return math.Inf(1)
	}
	return float64(e.ETA())
}

// state is the encoded scheduler for a commit of job j.
func (d *driver) state(j *Job, final *Outcome) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if final != nil {
		d.end(j, final)
	}
	d.s.Now = max(d.s.Now, d.now())
	d.account()
	b, err := d.s.Encode()
	if err != nil && d.err == nil {
		d.err = err
	}
	return b
}

// Bugs lists the jobs that found bugs, by ID.
func (s *Sched) Bugs() []*Job { return s.byStatus(BugFound) }

// Caveat is one reason a strategy gave why it may not have explored
// every trace of a job's state space, with the jobs that gave it.
type Caveat struct {
	Text string
	Jobs []int
}

// Caveats lists the jobs' distinct caveats (Job.Caveat), in the order of
// the jobs that first gave them.
func (s *Sched) Caveats() []Caveat {
	var out []Caveat
	for _, j := range s.Jobs {
		if j.Caveat == "" {
			continue
		}
		k := slices.IndexFunc(out, func(c Caveat) bool { return c.Text == j.Caveat })
		if k < 0 {
			k = len(out)
			out = append(out, Caveat{Text: j.Caveat})
		}
		out[k].Jobs = append(out[k].Jobs, j.ID)
	}
	return out
}

// Completed lists the completed jobs, smallest sets first.
func (s *Sched) Completed() []*Job {
	out := s.byStatus(Complete)
	slices.SortStableFunc(out, func(a, b *Job) int { return a.Set.Len() - b.Set.Len() })
	return out
}
