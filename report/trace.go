package report

import (
	"encoding/json"
	"fmt"
	"io"
	"landslide/emu/elfsym"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"landslide/record"
)

// Trace is a bug report: the failing interleaving and the exploration that
// found it (thesis §3.1.5, Fig 3.3). It is one model with three renderings:
// WriteText (terminal), WriteHTML (the preemption-trace table) and
// WriteJSON (scripts).
type Trace struct {
	Program       string   `json:"program"`        // ELF path
	PPSet         []string `json:"pp_set"`         // e.g. ["mutex_lock","mutex_unlock","data_race 0x10234 (thread1+12)"]
	Bug           *Bug     `json:"bug"`            // nil if the trace is not a failure
	Interleavings int      `json:"interleavings"`  // distinct interleavings tested, this one included
	EstimatedSize float64  `json:"estimated_size"` // estimated state-space size (interleavings); 0 = unknown
	Coverage      float64  `json:"coverage"`       // estimated fraction explored, 0..1
	Preemptions   int      `json:"preemptions"`    // preemptions in this trace
	Threads       []int32  `json:"threads"`        // column order: ascending tids that appear
	Steps         []Step   `json:"steps"`
	Replay        string   `json:"replay,omitempty"` // shell command replaying this trace
	// Races are the data-race candidates of the exploration that found
	// this trace, with both stacks (as explore lists them).
	Races []Race `json:"races,omitempty"`
	// Minimized, in a trace landslide minimize made, says how.
	Minimized *Minimized `json:"minimized,omitempty"`
}

// Minimized is how a trace was minimized: the same bug as a trace with
// From preemptions, with the fewest preemptions the search found.
type Minimized struct {
	From int `json:"from_preemptions"`
	// Proved: no interleaving of the PP set with fewer preemptions has
	// the bug. Otherwise none with fewer than Below has it, and Stopped
	// says why the search stopped.
	Proved   bool   `json:"proved"`
	Below    int    `json:"below"`
	Stopped  string `json:"stopped,omitempty"`
	Searched int    `json:"searched"` // interleavings the search ran
	// Needs is the nearest passing interleaving's lesson (empty: none of
	// the Tried reversals passed); Passing its schedule.
	Needs   string `json:"needs,omitempty"`
	Passing string `json:"passing,omitempty"`
	Tried   int    `json:"tried"`
	// Original names the trace it was minimized from
	// (RUN/JOB/TRACE), when it is stored.
	Original string `json:"original,omitempty"`
}

// Step is one transition: a row of the trace table. The cell of the
// running thread means "this thread ran from where it last stopped until
// here".
type Step struct {
	Index     int   `json:"index"`
	Thread    int32 `json:"thread"`
	Preempted bool  `json:"preempted"` // a preemption started this transition (switch away from a thread that could have continued)
	// PP labels the PP that ENDED the transition (see PPLabel): "yield",
	// "deschedule", "thread_create", "thread_exit", "make_runnable",
	// "sleep", a sync function's name ("mutex_lock"), "data race",
	// "annotation", "end".
	PP     string    `json:"pp"`
	PPKind string    `json:"pp_kind"`          // record.PPKind.String()
	Stack  []Frame   `json:"stack"`            // the thread's stack at that PP (frame 0 = PC; outer frames show call-site lines)
	Events []string  `json:"events,omitempty"` // readable sync events, e.g. "created thread 3", "mutex_lock(0x1040) returned"
	Race   *RacePair `json:"race,omitempty"`   // for a data-race PP: the racing access pair that made this PP
	// Failure says the bug happened in this transition.
	Failure bool `json:"failure,omitempty"`
	// Order, in a minimized trace, says which ordering the bug needs
	// that this transition is part of.
	Order string `json:"order,omitempty"`
}

// RacePair is the pair of racing accesses behind a data-race PP.
type RacePair struct {
	Access      Frame `json:"access"`       // the access at this PP
	Other       Frame `json:"other"`        // the access it races with
	OtherThread int32 `json:"other_thread"` // 0: no thread of this trace runs the other access
	// Value and OtherValue: what the access at this PP (made at the start
	// of the thread's next transition) and the other thread's read or
	// wrote in this trace, as the bytes of the access's size (absent when
	// not seen).
	Value      *uint64 `json:"value,omitempty"`
	OtherValue *uint64 `json:"other_value,omitempty"`
	Text       string  `json:"text"` // e.g. "races with thread 2's write at count (fig1.c:30) (…): this read got 1, thread 2's write stored 2"
}

// PPLabel is the label of a PP in a trace: the function's name for a sync
// function PP, "data race" for a data-race PP, and the kind's name for the
// others.
func PPLabel(pp record.PP) string {
	switch pp.Kind {
	case record.PPSyncFunc:
		if pp.Func != "" {
			return elfsym.Demangle(pp.Func)
		}
	case record.PPDataRace:
		return "data race"
	}
	return pp.Kind.String()
}

// SyncEventText is a readable form of a sync event for Step.Events ("":
// none).
func SyncEventText(e record.SyncEvent) string {
	switch e.Kind {
	case record.SyncCreate:
		return fmt.Sprintf("created thread %d", e.Other)
	case record.SyncExit:
		return "exited"
	case record.SyncBlock:
		return "blocked"
	case record.SyncUnblock:
		return fmt.Sprintf("made thread %d runnable", e.Other)
	case record.SyncEnter:
		return fmt.Sprintf("%s(%#x) called", e.Func, e.Arg)
	case record.SyncReturn:
		return fmt.Sprintf("%s(%#x) returned", e.Func, e.Arg)
	case record.SyncAlloc:
		return fmt.Sprintf("allocated block %d.%d at %#x", e.Block, e.Gen, e.Arg)
	case record.SyncFree:
		return fmt.Sprintf("freed block %d.%d at %#x", e.Block, e.Gen, e.Arg)
	case record.SyncTxnBegin:
		return "transaction began"
	case record.SyncTxnEnd:
		return "transaction committed"
	case record.SyncTxnAbort:
		return fmt.Sprintf("transaction aborted (%s)", record.AbortText(e.Arg))
	case record.SyncNondet:
		return fmt.Sprintf("__VERIFIER_nondet returned %d", int64(e.Arg))
	case record.SyncOpCall:
		return fmt.Sprintf("call %s(%d) began", e.Op, int64(e.Arg))
	case record.SyncOpReturn:
		return fmt.Sprintf("call %s returned %d", e.Op, int64(e.Arg))
	case record.SyncKill:
		switch e.Arg {
		case 0:
			return "ended the program (no other thread was left)"
		case 1:
			return "ended the program: 1 other thread ran no more"
		}
		return fmt.Sprintf("ended the program: %d other threads ran no more", e.Arg)
	case record.SyncRunState:
		if e.Arg == record.RunStateChanged {
			return "" // the event beside it (blocked, made runnable, ...) says so
		}
		return fmt.Sprintf("looked at thread %d's run state", e.Other)
	case record.SyncFence:
		switch e.Arg {
		case record.FenceAcquire:
			return "acquire fence"
		case record.FenceRelease:
			return "release fence"
		}
		return "fence"
	}
	s := e.Kind.String()
	if e.Func != record.NoSyncFunc {
		s += " " + e.Func.String()
	}
	return s
}

// ThreadsOf returns the ascending tids that run in steps: the default
// Trace.Threads.
func ThreadsOf(steps []Step) []int32 {
	seen := map[int32]bool{}
	var out []int32
	for _, s := range steps {
		if !seen[s.Thread] {
			seen[s.Thread] = true
			out = append(out, s.Thread)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Columns is the thread of each column of the trace table after "#":
// Threads, followed (ascending) by any thread that runs in a step but is
// missing from Threads, so that every step has its column.
func (t *Trace) Columns() []int32 {
	cols := append([]int32(nil), t.Threads...)
	in := map[int32]bool{}
	for _, c := range cols {
		in[c] = true
	}
	var extra []int32
	for _, s := range t.Steps {
		if !in[s.Thread] {
			in[s.Thread] = true
			extra = append(extra, s.Thread)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i] < extra[j] })
	return append(cols, extra...)
}

// formatSize formats an estimated state-space size.
func formatSize(x float64) string {
	if math.IsNaN(x) || x <= 0 {
		return "unknown"
	}
	if math.IsInf(x, 1) {
		return "infinite"
	}
	if x < 1e15 {
		return strconv.FormatFloat(math.Max(1, math.Round(x)), 'f', 0, 64) // a number of interleavings: whole
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// formatCoverage formats a fraction in 0..1 as a percentage.
func formatCoverage(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "unknown"
	}
	return strconv.FormatFloat(x*100, 'f', 2, 64) + "%"
}

func ppSetText(set []string) string {
	if len(set) == 0 {
		return "(mandatory PPs only)"
	}
	return strings.Join(set, ", ")
}

// WriteText writes the trace for a terminal: the header of thesis Fig 3.3
// (bug, current stack, details, counts), then one block per transition,
// then the replay command.
func (t *Trace) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	if t.Bug != nil {
		t.Bug.WriteText(ew)
	} else {
		fmt.Fprintf(ew, "No bug in this interleaving.\n")
	}
	if t.Program != "" {
		fmt.Fprintf(ew, "Program: %s\n", t.Program)
	}
	fmt.Fprintf(ew, "Distinct interleavings tested: %d\n", t.Interleavings)
	fmt.Fprintf(ew, "Estimated state space size: %s\n", formatSize(t.EstimatedSize))
	fmt.Fprintf(ew, "Estimated state space coverage: %s\n", formatCoverage(t.Coverage))
	fmt.Fprintf(ew, "Preemptions in this trace: %d\n", t.Preemptions)
	if m := t.Minimized; m != nil {
		m.writeText(ew, t.Preemptions)
	}
	fmt.Fprintf(ew, "PP set: %s\n", ppSetText(t.PPSet))

	cols := t.Columns()
	ids := make([]string, len(cols))
	for i, c := range cols {
		ids[i] = strconv.Itoa(int(c))
	}
	fmt.Fprintf(ew, "\nPreemption trace (%d transitions; threads %s):\n", len(t.Steps), strings.Join(ids, ", "))
	for i := 0; i < len(t.Steps); i++ {
		// Steps in which nothing happened but reaching the next PP of
		// the same call (pthread_create's entry, then its thread_create)
		// read as one: "#0-#1 thread 1 -> pthread_create -> thread_create".
		first := t.Steps[i]
		pps := []string{first.PP}
		for i+1 < len(t.Steps) && foldable(t.Steps[i], t.Steps[i+1]) {
			i++
			pps = append(pps, t.Steps[i].PP)
		}
		s := t.Steps[i]
		line := fmt.Sprintf("#%d thread %d", s.Index, s.Thread)
		if first.Index != s.Index {
			line = fmt.Sprintf("#%d-#%d thread %d", first.Index, s.Index, s.Thread)
		}
		if first.Preempted {
			line += " [preempted]"
		}
		line += " -> " + strings.Join(pps, " -> ")
		if s.Failure {
			line += "  <-- failure"
		}
		fmt.Fprintf(ew, "%s\n", line)
		writeFrames(ew, withoutStartup(s.Stack))
		for _, e := range s.Events {
			fmt.Fprintf(ew, "      * %s\n", e)
		}
		if s.Order != "" {
			fmt.Fprintf(ew, "      > %s\n", s.Order)
		}
		if s.Race != nil {
			fmt.Fprintf(ew, "      ! data race: %s\n", raceText(s.Race))
			fmt.Fprintf(ew, "          this access: %s\n", s.Race.Access.Text)
			fmt.Fprintf(ew, "          other access (%s): %s\n", s.Race.OtherName(), s.Race.Other.Text)
		}
	}
	if len(t.Races) > 0 {
		fmt.Fprintln(ew)
		WriteRaces(ew, t.Races)
	}
	if t.Replay != "" {
		fmt.Fprintf(ew, "\nReplay: %s\n", t.Replay)
	}
	return ew.err
}

// raceText is the race's description, made up from the frames when Text
// is empty.
func raceText(r *RacePair) string {
	if r.Text != "" {
		return r.Text
	}
	return fmt.Sprintf("%s races with %s at %s", r.Access.Text, r.OtherName(), r.Other.Text)
}

// OtherName names the other access's thread: "thread 3", or "another
// thread" where no thread of this trace runs it (OtherThread 0).
func (r *RacePair) OtherName() string {
	if r.OtherThread == 0 {
		return "another thread"
	}
	return fmt.Sprintf("thread %d", r.OtherThread)
}

// WriteJSON writes the trace as indented JSON. Non-finite estimates (which
// JSON cannot hold) are written as 0, "unknown".
func (t *Trace) WriteJSON(w io.Writer) error {
	c := *t
	if math.IsNaN(c.EstimatedSize) || math.IsInf(c.EstimatedSize, 0) {
		c.EstimatedSize = 0
	}
	if math.IsNaN(c.Coverage) || math.IsInf(c.Coverage, 0) {
		c.Coverage = 0
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // as every JSON output of the CLI
	return enc.Encode(&c)
}

// errWriter keeps the first write error so that a renderer made of many
// Fprintf calls can report it once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

// SyncEventTrace describes a sync event for `landslide run --trace`.
func SyncEventTrace(e record.SyncEvent) string {
	switch e.Kind {
	case record.SyncCreate:
		return fmt.Sprintf("creates thread %d", e.Other)
	case record.SyncUnblock:
		return fmt.Sprintf("makes thread %d runnable", e.Other)
	case record.SyncEnter, record.SyncReturn:
		return fmt.Sprintf("%s %s(0x%x)", e.Kind, e.Func, e.Arg)
	case record.SyncAlloc, record.SyncFree:
		return fmt.Sprintf("%s block #%d (generation %d) at 0x%x", e.Kind, e.Block, e.Gen, e.Arg)
	case record.SyncTxnAbort:
		return fmt.Sprintf("txn_abort (%s)", record.AbortText(e.Arg))
	case record.SyncNondet:
		return fmt.Sprintf("nondet returns %d", int64(e.Arg))
	case record.SyncOpCall:
		return fmt.Sprintf("op_call %s(%d)", e.Op, int64(e.Arg))
	case record.SyncOpReturn:
		return fmt.Sprintf("op_return %s → %d", e.Op, int64(e.Arg))
	case record.SyncKill:
		return fmt.Sprintf("kill (%d other threads alive)", e.Arg)
	case record.SyncRunState:
		if e.Arg == record.RunStateChanged {
			return fmt.Sprintf("run_state: changes thread %d's", e.Other)
		}
		return fmt.Sprintf("run_state: reads thread %d's", e.Other)
	}
	return e.Kind.String()
}

// writeText is the minimization's lines of a text report.
func (m *Minimized) writeText(w io.Writer, now int) {
	fmt.Fprintf(w, "Minimized: %s\n", m.Summary(now))
	if m.Original != "" {
		fmt.Fprintf(w, "Original trace: %s\n", m.Original)
	}
	if m.Needs != "" {
		fmt.Fprintf(w, "Nearest passing interleaving: %s\n", m.Needs)
		fmt.Fprintf(w, "  its schedule: %s\n", m.Passing)
	} else {
		fmt.Fprintf(w, "Nearest passing interleaving: %s\n", m.NoneText())
	}
}

// Summary says how the trace was minimized (its preemptions are now).
func (m *Minimized) Summary(now int) string {
	from := fmt.Sprintf("from %d to %d preemptions", m.From, now)
	if m.From == now {
		from = fmt.Sprintf("%d %s, as found", now, plural(now, "preemption"))
	}
	switch {
	case m.Proved:
		return fmt.Sprintf("%s, the fewest that give this bug (every interleaving with fewer was run: %d)", from, m.Searched)
	case m.Below > 0:
		return fmt.Sprintf("%s; none with fewer than %d gives this bug (the search stopped: %s, after %d interleavings)", from, m.Below, m.Stopped, m.Searched)
	}
	return fmt.Sprintf("%s (the search stopped: %s, after %d interleavings)", from, m.Stopped, m.Searched)
}

// NoneText says that no passing neighbour was found.
func (m *Minimized) NoneText() string {
	if m.Tried == 0 {
		return "none: no two threads' conflicting accesses in this trace to reverse"
	}
	return fmt.Sprintf("none of the %d reversals of two threads' conflicting accesses in this trace avoids the bug", m.Tried)
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// startupFrames are the SDK's thread entry points (crt0's _start, the
// POSIX layer's trampoline): the outermost frame of every stack, which a
// trace's steps leave out.
var startupFrames = []string{"_start", "ls_pthread_start"}

// withoutStartup is fs without its outermost startup frames (at least
// one frame is kept).
func withoutStartup(fs []Frame) []Frame {
	n := len(fs)
	for n > 1 && slices.Contains(startupFrames, fs[n-1].Func) {
		n--
	}
	return fs[:n]
}

// foldable: step a ended at a sync function's entry and did nothing
// but reach the PP before b, in the same call of the same thread (the
// same function at the top, the same callers), and b began without a
// preemption.
func foldable(a, b Step) bool {
	if a.PPKind != record.PPSyncFunc.String() || a.Thread != b.Thread || b.Preempted || a.Failure || len(a.Events) > 0 || a.Race != nil || a.Order != "" ||
		len(a.Stack) == 0 || len(a.Stack) != len(b.Stack) || a.Stack[0].Func != b.Stack[0].Func {
		return false
	}
	for k := 1; k < len(a.Stack); k++ {
		if a.Stack[k].PC != b.Stack[k].PC {
			return false
		}
	}
	return true
}
