package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"landslide/check"
	"landslide/store"
)

// DefaultStore is the workspace store when neither --store nor
// $LANDSLIDE_STORE names one.
const DefaultStore = ".landslide"

// storeDir is the workspace the command uses.
func storeDir(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("store"); f != nil && f.Changed {
		return f.Value.String()
	}
	if d := os.Getenv("LANDSLIDE_STORE"); d != "" {
		return d
	}
	return DefaultStore
}

// again is the command line that runs landslide's sub command on run id
// in the store at dir: "landslide resume ID", with "--store DIR" when a
// bare command would open another store (--store was given, and names
// neither $LANDSLIDE_STORE nor the default).
func again(dir, sub, id string) string {
	bare := DefaultStore
	if d := os.Getenv("LANDSLIDE_STORE"); d != "" {
		bare = d
	}
	a, errA := filepath.Abs(dir)
	b, errB := filepath.Abs(bare)
	if dir == "" || errA == nil && errB == nil && a == b {
		return "landslide " + sub + " " + id
	}
	return "landslide --store " + quoteArgs([]string{dir})[0] + " " + sub + " " + id
}

// storeFS is the store's file system (nil: the real one); tests inject
// a full or read-only disk.
var storeFS vfs.FS

// openStore opens the workspace; every failure is an input error (exit
// 2) with a message that says what to do.
func openStore(cmd *cobra.Command, readOnly bool) (*store.Store, error) {
	dir := storeDir(cmd)
	st, err := store.Open(dir, store.Options{ReadOnly: readOnly, FS: storeFS})
	if err != nil {
		return nil, storeErr(dir, err)
	}
	if !readOnly {
		// Readers cannot open the store while this process holds it:
		// it says what it does in the store's status file instead.
		st.UpdateLive(true, func(l *store.Live) { l.Command = cmd.Name() })
	}
	warnStore(cmd, st)
	return st, nil
}

// warnStore says the damage the store found when it opened.
func warnStore(cmd *cobra.Command, st *store.Store) {
	dir := st.Dir()
	// Damage the store found when it opened is said every time, loudly:
	// results that went backwards must never pass for the real ones.
	w := cmd.ErrOrStderr()
	if err := st.CounterDamaged(); err != nil {
		fmt.Fprintf(w, "landslide: warning: store %s: its commit counter %s was damaged (%v); lost commits from before now cannot be detected (landslide verify-store)\n",
			dir, store.CounterFile, err)
	}
	for _, l := range st.Lost() {
		if l.Job == 0 {
			fmt.Fprintf(w, "landslide: warning: store %s: %s: the write-ahead log that held it was damaged\n", dir, l)
			continue
		}
		fmt.Fprintf(w, "landslide: warning: store %s: %s: the write-ahead log that held them was damaged (%s redoes the lost work)\n",
			dir, l, again(dir, "resume", l.Run))
	}
	for _, g := range st.Gaps() {
		fmt.Fprintf(w, "landslide: warning: store %s: %s (landslide verify-store lists what is missing)\n", dir, g)
	}
}

// lostErr refuses to read a run whose stored results are older than its
// last commit (store.Lost): they are not the results it reached.
func lostErr(st *store.Store, run string) error {
	lost := st.LostRun(run)
	if len(lost) == 0 {
		return nil
	}
	return usageErr("store %s: %s, so its stored results are older than what it reached; `%s` redoes the lost work",
		st.Dir(), lost[0], again(st.Dir(), "resume", run))
}

// openRun opens the workspace and finds the run ref names (an ID or a
// unique prefix). The caller closes the store.
func openRun(cmd *cobra.Command, ref string, readOnly bool) (*store.Store, *store.Run, error) {
	st, err := openStore(cmd, readOnly)
	if err != nil {
		return nil, nil, err
	}
	return findRun(cmd, st, ref)
}

// findRun finds the run ref names in the open store st (closed on error).
func findRun(cmd *cobra.Command, st *store.Store, ref string) (*store.Store, *store.Run, error) {
	run, err := st.Run(ref)
	if err != nil {
		st.Close()
		return nil, nil, storeErr(st.Dir(), err)
	}
	if cmd.Name() != "resume" {
		if err := lostErr(st, run.ID); err != nil {
			st.Close()
			return nil, nil, err
		}
	}
	return st, run, nil
}

// storeErr turns a store failure into exit 2 with a clear message.
func storeErr(dir string, err error) error {
	switch {
	case errors.Is(err, store.ErrLocked):
		return usageErr("%v (wait for it to finish, or use another --store; landslide ls shows its live progress)", err)
	case errors.Is(err, store.ErrVersion):
		return usageErr("store %s: %v", dir, err)
	case errors.Is(err, store.ErrNotFound):
		return usageErr("store %s: %v", dir, err)
	case errors.Is(err, store.ErrCorrupt):
		// The error names the store, the damaged file and what was read.
		var ce *store.CorruptError
		if errors.As(err, &ce) && ce.Whole {
			return usageErr("%v; the store cannot be opened (its files are left as they are)%s", err, walHint(ce.File))
		}
		return usageErr("%v; the rest of the store may be intact (landslide verify-store lists what is damaged)", err)
	}
	return usageErr("store %s: %v (nothing already committed is lost)", dir, err)
}

// readErr is storeErr for a command that only reads: a failure that is
// not the store's (a reference that names nothing) is said as it is, with
// no word about committed work, which a read cannot lose.
func readErr(dir string, err error) error {
	for _, kind := range []error{store.ErrLocked, store.ErrVersion, store.ErrNotFound, store.ErrCorrupt} {
		if errors.Is(err, kind) {
			return storeErr(dir, err)
		}
	}
	return usageErr("store %s: %v", dir, err)
}

// walHint says how to open a store whose write-ahead log is damaged.
func walHint(file string) string {
	if !strings.HasSuffix(file, ".log") {
		return ""
	}
	return fmt.Sprintf("; moving %s out of the store directory opens it without the commits that log holds (landslide verify-store then lists what they took with them)", file)
}

// jobErr is a failed exploration: a store failure or bad input, exit 2.
func jobErr(path string, err error) error {
	return usageErr("%s: %v", path, err)
}

// persistFlags tune how explorations are committed to the store.
type persistFlags struct {
	every      int
	interval   time.Duration
	checkpoint int
	noBranches bool
}

func (p *persistFlags) register(fl *pflag.FlagSet) {
	fl.IntVar(&p.every, "commit-every", check.DefaultCommitEvery, "commit to the store after this many interleavings")
	fl.DurationVar(&p.interval, "commit-interval", check.DefaultCommitInterval, "... or after this much time, whichever comes first")
	fl.IntVar(&p.checkpoint, "checkpoint-every", check.DefaultCheckpointEvery, "store the machine's state every this many PPs along the branch at each commit (0: never)")
	fl.BoolVar(&p.noBranches, "no-branch-log", false, "do not store the interleavings (saves space; offline race analysis then cannot run)")
}

// recording is how a check is kept in st: the flags' tuning, the command
// line as given, and the line that says how to resume a new run.
func (p *persistFlags) recording(cmd *cobra.Command, st *store.Store) check.Recording {
	// The command line as given (show prints it once, as "landslide ...").
	var args []string
	if argv, ok := cmd.Root().Annotations[argvListKey]; ok {
		args = strings.Split(argv, "\x00")
	}
	checkpoint := p.checkpoint
	if checkpoint == 0 {
		checkpoint = -1 // the flag's 0 is never; the library's is its default
	}
	return check.Recording{Store: st, Args: args, Every: p.every, Interval: p.interval, CheckpointEvery: checkpoint,
		NoBranchLog: p.noBranches, OnRun: func(run *store.Run) {
			liveRun(st, run)
			// Printed even with --quiet: after a crash, this line is
			// what says how to go on.
			fmt.Fprintf(cmd.ErrOrStderr(), "landslide: run %s in %s (resume it with `%s` if interrupted)\n", run.ID, st.Dir(), again(st.Dir(), "resume", run.ID))
		}}
}

// storeDirOf is the store a recording uses ("" for none).
func storeDirOf(rec check.Recording) string {
	if rec.Store == nil {
		return ""
	}
	return rec.Store.Dir()
}

func newResumeCmd() *cobra.Command {
	var out outputFlags
	var pf persistFlags
	var budget time.Duration
	var maxInterleave int
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Continue an interrupted exploration from its last commit",
		Long: `Resume continues a stored exploration exactly where its last commit left it
(a crash or kill loses at most the work since then), with the same options
and the same budget accounting: the time already spent counts against
--budget, which defaults to the run's own. It ends with the result an
uninterrupted run would have had. RUN is a run ID or a unique prefix of one
(see landslide ls). Exit codes as for explore.`,
		Args: exactly(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDir(out.traceDir); err != nil {
				return usageErr("--trace-dir: %v", err)
			}
			st, run, err := openRun(cmd, args[0], false)
			if err != nil {
				return err
			}
			defer st.Close()
			switch {
			case run.Status == store.StatusVerified, run.Status == store.StatusBug, run.Status == store.StatusBounded:
				return usageErr("run %s has already finished: %s (see %s)", run.ID, run.Message, again(st.Dir(), "show", run.ID))
			case run.Status == store.StatusLimit && run.Command != "quicksand":
				// Its state space cannot complete under these limits (a
				// Quicksand run's other jobs may still go on).
				return usageErr("run %s stopped at a limit of the checker: %s; explore it again with the limit raised (see %s)", run.ID, run.Message, again(st.Dir(), "show", run.ID))
			}
			rec := pf.recording(cmd, st)
			if run.Command == "quicksand" {
				return resumeQuicksand(cmd, rec, run, &out, budget)
			}
			var o check.Overrides
			if cmd.Flags().Changed("budget") {
				o.Budget = budget
			}
			if cmd.Flags().Changed("max-interleavings") {
				o.MaxInterleavings = &maxInterleave
			}
			var hooks check.Hooks
			out.attach(&hooks, cmd.ErrOrStderr())
			liveRun(st, run)
			watchProgress(&hooks, st)
			if !out.quiet {
				fmt.Fprintf(cmd.ErrOrStderr(), "landslide: resuming run %s (%s)\n", run.ID, run.Message)
			}
			ctx, stop := interruptContext(cmd)
			defer stop()
			res, err := check.ResumeExplore(ctx, rec, run, o, hooks)
			if err != nil {
				var se *check.StoreError
				if !errors.As(err, &se) && strings.HasPrefix(err.Error(), "run "+run.ID+": ") {
					return usageErr("%v", err)
				}
				return checkErr(run.Program, err)
			}
			return reportExplore(cmd, run.Program, &out, res, st.Dir())
		},
	}
	fl := cmd.Flags()
	out.register(fl)
	pf.register(fl)
	fl.DurationVar(&budget, "budget", 0, "total time budget, the time already spent included (default: the run's)")
	fl.IntVar(&maxInterleave, "max-interleavings", 0, "stop after this many interleavings in all (default: the run's)")
	return cmd
}
