package cli

import "landslide/report"

// The JSON documents the commands print with --json. Each is one exported
// type, so that tests and tools decode the same schema the command writes.
//
// One style across commands: keys are snake_case; a time is wall-clock
// seconds under a key ending in _seconds, and a count of interleavings
// under one ending in _interleavings (Quicksand's --interleaving-budget
// clock); the bugs a command found are always the array "bugs" of
// BugJSON (empty when none), whether the command can find one (run,
// explore) or many (quicksand); the program file's SHA-256 is "sha256",
// 64 hex digits, wherever it appears, and a trace's hash is 64 hex digits
// in text and JSON alike (a bug signature, 16, is a different thing: a
// key over the bug's kind and stack).

// ExploreJSON is explore's and resume's --json document.
type ExploreJSON struct {
	Program       string `json:"program"`
	Run           string `json:"run,omitempty"`
	Result        string `json:"result"`
	ExitCode      int    `json:"exit_code"`
	Interleavings int    `json:"interleavings"`
	Executed      int    `json:"executed"`
	// SleepBlocked are executions abandoned with every runnable thread
	// asleep (in Executed, not in Interleavings; optimal DPOR: none).
	SleepBlocked int `json:"sleep_blocked"`
	// Blocked are infeasible executions, where a thread was stopped by
	// __VERIFIER_assume(0) (in Executed, not in Interleavings or Traces:
	// Nidhugg's and GenMC's assume-blocked executions).
	Blocked int `json:"blocked"`
	// SelfAborts are executions stopped after a transaction that aborted
	// itself, whose abort an injected one explores (in Executed, not in
	// Interleavings; the dpor strategy only).
	SelfAborts int `json:"self_aborts,omitempty"`
	// Budgeted are executions that ran out of the instruction budget.
	Budgeted int `json:"budgeted,omitempty"`
	// Traces are the distinct Mazurkiewicz traces among the executions
	// that ended (not sleep-set blocked, not out of instructions); a
	// lower bound when TracesAtLeast (a resumed run counts its own).
	Traces        int  `json:"traces"`
	TracesAtLeast bool `json:"traces_lower_bound,omitempty"`
	Transitions   int  `json:"transitions"`
	Complete      bool `json:"complete"`
	Verified      bool `json:"verified"`
	Bounded       bool `json:"bounded,omitempty"`
	Bound         int  `json:"preemption_bound,omitempty"`
	// SpecOrders: with --linearizability, the orders of the calls the
	// sequential specification holds.
	SpecOrders int    `json:"linearizability_orders,omitempty"`
	Stopped    string `json:"stopped,omitempty"`
	// Cut: the exploration stopped (the budget, an interrupt) inside an
	// execution, which is not counted.
	Cut           bool       `json:"cut_inside_execution,omitempty"`
	Proportion    float64    `json:"estimated_proportion"`
	EstimatedSize float64    `json:"estimated_size"`
	ElapsedSec    float64    `json:"elapsed_seconds"`
	PPSet         []string   `json:"pp_set"`
	Races         []RaceJSON `json:"races"`
	// Bugs: the bug that stopped the exploration (at most one).
	Bugs []*BugJSON `json:"bugs"`
	// Limit: an execution went past a limit of the checker (result
	// "limit", stopped "checker limit"): no bug, no verdict.
	Limit *LimitJSON `json:"limit,omitempty"`
	// Caveat, if set, says why the strategy may not have explored every
	// trace of this program (also printed on stderr).
	Caveat string `json:"caveat,omitempty"`
	// Fallback, if set, says why optimal DPOR (the default strategy) fell
	// back to the dpor strategy, which then explored the state space from
	// the start (the counts include optimal DPOR's executions).
	Fallback string `json:"fallback,omitempty"`
}

// LimitJSON is a limit of the checker an execution went past (live
// threads, guest memory, output): no bug of the program, and no verdict.
type LimitJSON struct {
	// Message says which limit and the flag that raises it.
	Message string         `json:"message"`
	Thread  int32          `json:"thread"`
	Stack   []report.Frame `json:"stack,omitempty"`
	// Replay is the landslide run command that repeats the execution.
	Replay string `json:"replay,omitempty"`
}

// newLimitJSON describes a checker limit, l symbolised (nil: none).
func newLimitJSON(l *report.Bug, replay string) *LimitJSON {
	if l == nil {
		return nil
	}
	return &LimitJSON{Message: l.Message, Thread: l.Thread, Stack: l.Stack, Replay: replay}
}

// RaceJSON is one data-race candidate (explore, resume, races).
type RaceJSON struct {
	Addr              uint64         `json:"addr"`
	A                 RaceSideJSON   `json:"a"`
	B                 RaceSideJSON   `json:"b"`
	BothOrder         bool           `json:"both_order"`
	FirstInterleaving bool           `json:"first_interleaving"`
	Realloc           bool           `json:"free_re_malloc"`
	Count             int            `json:"count"`
	StackA            []report.Frame `json:"stack_a"`
	StackB            []report.Frame `json:"stack_b"`
}

// RaceSideJSON is one access of a candidate.
type RaceSideJSON struct {
	PC     uint64 `json:"pc"`
	Where  string `json:"where,omitempty"` // races: the instruction's function and line
	Thread int32  `json:"thread"`
	Write  bool   `json:"write"`
	Atomic bool   `json:"atomic"`
}

// BugJSON is one bug in every command's "bugs": what failed and where
// (as `landslide bugs` groups it, by Signature), and, where the command
// explored, the failing interleaving and the report files written for it.
type BugJSON struct {
	// Job, PPSet and FoundAt*: quicksand only, the job that found it, its
	// PP set, and when (its clock: wall seconds, or with
	// --interleaving-budget interleavings).
	Job                  int      `json:"job,omitempty"`
	PPSet                string   `json:"pp_set,omitempty"`
	FoundAtSeconds       *float64 `json:"found_at_seconds,omitempty"`
	FoundAtInterleavings *int64   `json:"found_at_interleavings,omitempty"`
	Kind                 string   `json:"kind,omitempty"`
	Message              string   `json:"message"`
	Signature            string   `json:"signature"`
	// Thread, PC and Stack: the failing thread, instruction and stack;
	// Details, what else the bug report says (all absent for a bug
	// a resumed quicksand run found before, whose trace is in the store).
	Thread  int32           `json:"thread,omitempty"`
	PC      uint64          `json:"pc,omitempty"`
	Stack   []report.Frame  `json:"stack,omitempty"`
	Details []report.Detail `json:"details,omitempty"` // e.g. a linearizability violation's histories
	// Files are the reports written (text, HTML, JSON of Trace).
	Files []string      `json:"files,omitempty"`
	Trace *report.Trace `json:"trace,omitempty"`
}

// newBugJSON is the bug b (symbolised; nil: none) with its signature and
// the trace that found it (nil: run's one execution).
func newBugJSON(b *report.Bug, sig string, tr *report.Trace, files []string) *BugJSON {
	return &BugJSON{Kind: b.Kind, Message: b.Message, Signature: sig, Thread: b.Thread, PC: b.PC, Stack: b.Stack, Details: b.Details,
		Files: files, Trace: tr}
}

// QuicksandJSON is quicksand's --json document.
type QuicksandJSON struct {
	Program           string             `json:"program"`
	Result            string             `json:"result"`
	ExitCode          int                `json:"exit_code"`
	Bugs              []*BugJSON         `json:"bugs"`
	Jobs              []QuicksandJobJSON `json:"jobs"`
	VerifiedPPSets    []string           `json:"verified_pp_sets"`
	TotalVerification bool               `json:"total_verification"`
	UncoveredRacePPs  []string           `json:"uncovered_race_pps"`
	// AtomicConflicts are the atomic conflicts the jobs reported (pairs
	// of atomic accesses the happens-before leaves unordered: never data
	// races, and in no "races" list); Quicksand makes them PPs after
	// every data race. UncoveredAtomicPPs are their PPs no completed job
	// held.
	AtomicConflicts    []QuicksandConflictJSON `json:"atomic_conflicts"`
	UncoveredAtomicPPs []string                `json:"uncovered_atomic_conflict_pps"`
	// Walks: the PCT walks Quicksand ran beside its jobs (nil when none
	// ran). They never count towards a verification.
	Walks *QuicksandWalksJSON `json:"walks,omitempty"`
	// Clock is what the budget counted: "wall" (seconds) or
	// "interleavings"; ElapsedInterleavings is set with the latter.
	Clock                string  `json:"clock"`
	ElapsedSeconds       float64 `json:"elapsed_seconds"`
	ElapsedInterleavings *int64  `json:"elapsed_interleavings,omitempty"`
	CPUSeconds           float64 `json:"cpu_seconds"`
	Saturation           float64 `json:"core_saturation"`
	Run                  string  `json:"run,omitempty"`
	// Caveats: the jobs' distinct caveats (QuicksandJobJSON.Caveat).
	Caveats []string `json:"caveats,omitempty"`
}

// QuicksandConflictJSON is one atomic conflict of a quicksand run: its
// two instructions, the one that ran first as A.
type QuicksandConflictJSON struct {
	PCA       uint64 `json:"pc_a"`
	WhereA    string `json:"where_a,omitempty"`
	PCB       uint64 `json:"pc_b"`
	WhereB    string `json:"where_b,omitempty"`
	BothOrder bool   `json:"both_order"`
	// Job is the first job that reported it; Covered says whether a
	// completed job held the PPs Quicksand adds for it.
	Job     int  `json:"job"`
	Covered bool `json:"covered"`
}

// QuicksandWalksJSON sums up the PCT walks of a quicksand run.
type QuicksandWalksJSON struct {
	Slices int `json:"slices"`
	Walks  int `json:"walks"`
	// Seconds is the time the walks took, on the wall clock; with the
	// interleaving clock, Interleavings (each walk counts one).
	Seconds       float64 `json:"elapsed_seconds,omitempty"`
	Interleavings *int64  `json:"elapsed_interleavings,omitempty"`
	// Depth is PCT's d; Seed the first PCT slice's seed (PCT slice k has
	// seed Seed+k-1); PCTSlices the PCT slices, the others being
	// race-reversal slices.
	Depth     int    `json:"depth"`
	Seed      uint64 `json:"seed"`
	PCTSlices int    `json:"pct_slices"`
	// Reversal is the next race-reversal candidate; ReversalDone that the
	// candidates ran out.
	Reversal     uint64 `json:"reversal_next"`
	ReversalDone bool   `json:"reversal_done"`
	// PPSet is the PP set of the last slice.
	PPSet string `json:"pp_set,omitempty"`
}

// QuicksandJobJSON is one job of a quicksand run.
type QuicksandJobJSON struct {
	ID            int     `json:"id"`
	PPSet         string  `json:"pp_set"`
	Status        string  `json:"status"`
	Origin        string  `json:"origin"`
	Interleavings int     `json:"interleavings"`
	Proportion    float64 `json:"estimated_proportion"`
	Suspensions   int     `json:"suspensions"`
	Note          string  `json:"note,omitempty"`
	// Caveat, if set, says why the job's strategy may not have explored
	// every trace of its state space.
	Caveat string `json:"caveat,omitempty"`
	// Limit: status "limit", an execution went past this limit of the
	// checker (which, and the flag that raises it).
	Limit string `json:"limit,omitempty"`
}

// RunJSON is run's --json document.
type RunJSON struct {
	Program      string `json:"program"`
	SHA256       string `json:"sha256"`
	Result       string `json:"result"`
	ExitCode     int    `json:"exit_code"`
	ExitStatus   int    `json:"exit_status"`
	Stdout       string `json:"stdout"`
	PPs          int    `json:"preemption_points"`
	Instructions uint64 `json:"instructions"`
	Schedule     string `json:"schedule"`
	TraceHash    string `json:"trace_hash"`
	// Bugs: the execution's bug, if it had one.
	Bugs []*BugJSON `json:"bugs"`
	// Limit: the execution went past a limit of the checker (result
	// "limit", exit 3): no bug.
	Limit  *LimitJSON `json:"limit,omitempty"`
	Leaks  int        `json:"leaked_blocks"`
	Replay string     `json:"replay"`
}
