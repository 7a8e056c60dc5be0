package check

import (
	"landslide/dpor"
	"landslide/emu/elfsym"
	"landslide/estimator"
	"landslide/job"
	"landslide/kernel"
	"landslide/race"
	"landslide/record"
	"landslide/report"
)

// The vocabulary of the layers below that a front end names.
type (
	Spec        = job.Spec        // a job's specification (data)
	Config      = job.Config      // a job: spec, image, hooks
	Hooks       = job.Hooks       // a job's progress, clock, control and store hooks
	Progress    = job.Progress    // a job's progress report
	Step        = job.Step        // one interleaving, as a job's Control sees it
	RaceReport  = job.RaceReport  // a race candidate with both stacks
	PPRequest   = job.PPRequest   // a PP set as asked for
	ResolvedPPs = job.ResolvedPPs // a PP set resolved against a program
	HB          = race.Mode       // the data-race analysis
	Candidate   = race.Candidate  // a data-race candidate
	Stop        = dpor.Stop       // why an exploration stopped early
	Strategy    = dpor.StrategyInfo
	Forecast    = estimator.Forecast // a smoothed ETA with its range
	Smoother    = estimator.Smoother // smooths a job's ETA
)

// HB modes, stop reasons and bounds.
const (
	Limited          = race.Limited
	Pure             = race.Pure
	StopBudget       = dpor.StopBudget
	StopLimit        = dpor.StopLimit
	StopCanceled     = dpor.StopCanceled
	StopCheckerLimit = dpor.StopCheckerLimit // an execution went past a checker limit (Result.Limit)
	UnlimitedBound   = dpor.UnlimitedBound

	DefaultStrategy        = dpor.DefaultStrategy
	DefaultCommitEvery     = job.DefaultCommitEvery
	DefaultCommitInterval  = job.DefaultCommitInterval
	DefaultCheckpointEvery = job.DefaultCheckpointEvery

	// RetrySetsCaveat warns that retry sets (-R) are not exact.
	RetrySetsCaveat = dpor.RetrySetsCaveat
)

// Functions of the layers below.
var (
	// ResolvePPs is the one place a PP set is made (job.ResolvePPs).
	ResolvePPs = job.ResolvePPs
	IsAddrSpec = job.IsAddrSpec
	// ParseSize reads a byte count as --max-memory takes it ("512M").
	ParseSize = job.ParseSize
	// FormatSize prints one so ("512MiB").
	FormatSize = job.FormatSize
	// ParseHB reads "limited" or "pure".
	ParseHB = race.ParseMode
	// Strategies lists the exploration strategies (--strategy).
	Strategies = dpor.Strategies
	// Bound is a preemption bound for Spec.MaxBound.
	Bound = dpor.Bound
)

// The machine's default limits (kernel.Config): live threads and guest
// memory.
const (
	DefaultMaxThreads = kernel.DefaultMaxThreads
	DefaultMaxMemory  = kernel.DefaultMaxMemory
)

// DefaultSyncPPs are the sync PPs of a PP set that names none.
func DefaultSyncPPs() []string { return append([]string(nil), kernel.DefaultSyncPPs...) }

// ReportRaces is the reports' view of an exploration's candidates, their
// addresses named as the machine named them (RaceReport.Data: globals,
// heap blocks, stacks), else by syms' data objects (nil: unnamed).
func ReportRaces(syms *elfsym.Symbols, rs []*job.RaceReport) []report.Race {
	var out []report.Race
	for _, r := range rs {
		rr := report.NewRace(r.Candidate, r.StackA, r.StackB)
		rr.Data = r.Data
		if rr.Data == "" {
			rr.Data = report.DataName(syms, rr.Addr)
		}
		out = append(out, rr)
	}
	return out
}

// RaceSide is one access of a race candidate.
type RaceSide = race.Side

// CheckSpec reports what is wrong with a spec before anything runs (a
// strategy that does not exist or does not take a parameter given).
func CheckSpec(s Spec) error {
	_, err := dpor.NewStrategy(s.Spec)
	return err
}

// DecodeSpec reads a stored job spec.
var DecodeSpec = job.DecodeSpec

// Choice is the decision at a PP: a thread, and a value where the PP
// has several outcomes (see record.Choice).
type Choice = record.Choice

// Transition is one transition of an execution (replay's steps).
type Transition = record.Transition
