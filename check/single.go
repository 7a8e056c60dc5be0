package check

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"landslide/dpor"
	"landslide/emu/elfsym"
	"landslide/job"
	"landslide/kernel"
	"landslide/race"
	"landslide/record"
	"landslide/replay"
	"landslide/report"
	"landslide/schedule"
	"landslide/store"
)

// Execution is one run of a program under one schedule.
type Execution struct {
	// Outcome is the execution's; a checker limit is never its Bug.
	*kernel.Outcome
	// Limit: the execution went past a limit of the checker (threads,
	// memory, output): which one, where. It is no bug of the program.
	Limit *record.Bug
	Syms  *elfsym.Symbols
	// Replay is the command line that repeats it.
	Replay string
}

// Schedule chooses the threads of one execution: Choices first (then
// the default), or with Seed >= 0 uniformly at random, or else the
// default scheduler's choices.
type Schedule struct {
	Choices []record.Choice // as ParseSchedule reads `landslide run --schedule`
	Seed    int64           // -1: not random
}

// ParseSchedule reads choices as `landslide run --schedule` takes them.
func ParseSchedule(s string) ([]record.Choice, error) { return schedule.Parse(s) }

// Execute runs the program once under kcfg and the schedule.
func Execute(image []byte, path string, kcfg kernel.Config, sc Schedule) (*Execution, error) {
	var ch schedule.Chooser = schedule.Default{}
	if sc.Seed >= 0 {
		r := schedule.NewRandom(uint64(sc.Seed))
		r.Aborts = !kcfg.HTM.Weak // weak atomicity has no RETRY aborts (the thesis's -W needs -S)
		ch = r
	}
	if sc.Choices != nil {
		ch = schedule.Script{Choices: sc.Choices}
	}
	k, err := kernel.New(image, kcfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	out, err := k.Play(ch)
	if err != nil {
		return nil, err
	}
	var limit *record.Bug
	if out.Bug.IsLimit() {
		limit, out.Bug = out.Bug, nil
	}
	// The replay line repeats the configuration too: the PPs, limits,
	// filters, transactional modes and the program's arguments.
	spec := job.Spec{Program: path, Kernel: kcfg, Spec: dpor.Spec{AbortCodes: kcfg.HTM.AbortCodes, WeakAtomicity: kcfg.HTM.Weak}}
	return &Execution{Outcome: out, Limit: limit, Syms: k.Symbols(), Replay: job.ReplayCommand(spec, out.Schedule)}, nil
}

// FormatSchedule prints choices as --schedule takes them.
func FormatSchedule(cs []record.Choice) string { return schedule.Format(cs) }

// ReplayOptions: see replay.Options.
type ReplayOptions = replay.Options

// Replayed is a re-executed stored trace, its report carrying the job's
// race candidates as when it was found.
type Replayed = replay.Result

// Replay re-executes a stored trace of run and checks that every
// transition is the stored one.
func Replay(st *store.Store, run *store.Run, tr *store.TraceRecord, opt ReplayOptions) (*Replayed, error) {
	res, err := replay.Trace(st, run, tr, opt)
	if err != nil {
		return nil, err
	}
	if res.Report != nil {
		res.Report.Minimized = minimizedAccount(tr)
		recs, err := st.Races(run.ID, tr.Job)
		if err != nil {
			return nil, &StoreError{Dir: st.Dir(), Err: err}
		}
		for _, r := range recs {
			rr := report.NewRace(&r.Candidate, r.StackA, r.StackB)
			rr.Data = r.Data
			res.Report.Races = append(res.Report.Races, rr)
		}
	}
	return res, nil
}

// OfflineRaces is a job's race candidates re-analysed from its stored
// interleavings.
type OfflineRaces struct {
	Candidates    []*race.Candidate
	Races         []report.Race // the same, with both stacks
	Interleavings int
	Syms          *elfsym.Symbols
}

// Races re-runs data-race analysis with mode over the stored
// interleavings of one job of run, executing nothing. The stacks are
// the ones the exploration stored (a pair only this mode finds has its
// racing instructions).
func Races(st *store.Store, run *store.Run, jobID int, mode race.Mode) (*OfflineRaces, error) {
	cands, n, err := replay.Races(st, run, jobID, mode)
	if err != nil {
		return nil, err
	}
	_, _, k, err := replay.Load(st, run, jobID)
	if err != nil {
		return nil, err
	}
	out := &OfflineRaces{Candidates: cands, Interleavings: n, Syms: k.Symbols()}
	recs, err := st.Races(run.ID, jobID)
	if err != nil {
		return nil, &StoreError{Dir: st.Dir(), Err: err}
	}
	stacks := map[[2]uint64][2][]report.Frame{}
	for _, r := range recs {
		stacks[r.Candidate.Key()] = [2][]report.Frame{r.StackA, r.StackB}
	}
	for _, c := range cands {
		sk, ok := stacks[c.Key()]
		if !ok {
			sk = [2][]report.Frame{report.Frames(out.Syms, []uint64{c.A.PC}), report.Frames(out.Syms, []uint64{c.B.PC})}
		}
		rr := report.NewRace(c, sk[0], sk[1])
		rr.Data = report.DataName(out.Syms, rr.Addr)
		out.Races = append(out.Races, rr)
	}
	return out, nil
}

// MaxProgramSize is the largest program file LoadELF reads: a guest's
// whole memory is 256 MiB by default, and its ELF far smaller.
const MaxProgramSize = 256 << 20

// LoadELF reads a program file and checks that it is an ELF Landslide
// can run (the error names the file). Only a regular file of at most
// MaxProgramSize bytes is read: a device, a FIFO or a directory is
// refused before it is opened (reading /dev/zero or a FIFO would never
// end), and so is a larger file (a sparse one of gigabytes would be read
// whole).
func LoadELF(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, pathErr(path, err)
	}
	if err := programFile(path, st); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, pathErr(path, err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil { // what was opened, if the path changed since
		return nil, err
	}
	if err := programFile(path, st); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxProgramSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxProgramSize {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a program Landslide runs", path, MaxProgramSize>>20)
	}
	if _, err := elfsym.Parse(data); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return data, nil
}

// pathErr says "PATH: what went wrong" (not "stat PATH: ...").
func pathErr(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", path, pe.Err)
	}
	return err
}

// programFile refuses what LoadELF does not read.
func programFile(path string, st os.FileInfo) error {
	m := st.Mode()
	switch {
	case m.IsDir():
		return fmt.Errorf("%s: a directory, not a program", path)
	case !m.IsRegular():
		return fmt.Errorf("%s: not a regular file (%s), not a program", path, fileKind(m))
	case st.Size() > MaxProgramSize:
		return fmt.Errorf("%s: %d bytes, larger than %d MiB: not a program Landslide runs", path, st.Size(), MaxProgramSize>>20)
	}
	return nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}
