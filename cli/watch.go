package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"landslide/check"
	"landslide/store"
)

// Watching a running exploration: the process that holds a store (explore,
// quicksand, resume, import) publishes what it does in the store's status
// file (store.UpdateLive); ls and show, which cannot open a store while a
// writer holds it, print that instead of refusing.

// liveRun adds run to the runs st's live status lists (or renews it).
func liveRun(st *store.Store, run *store.Run) {
	st.UpdateLive(true, func(l *store.Live) {
		lr := store.LiveRun{ID: run.ID, Command: run.Command, Program: run.Program, Created: run.Created}
		for i := range l.Runs {
			if l.Runs[i].ID == run.ID {
				l.Runs[i] = lr
				return
			}
		}
		l.Runs = append(l.Runs, lr)
	})
}

// lastLiveRun is the run a single-run command (explore, resume) writes.
func lastLiveRun(l *store.Live) *store.LiveRun {
	if len(l.Runs) == 0 {
		return nil
	}
	return &l.Runs[len(l.Runs)-1]
}

// watchProgress makes an explore job publish its progress in st's live
// status every store.LiveEvery, whether or not it prints progress: h's
// own reports still come every ProgressEvery (and at the end).
func watchProgress(h *check.Hooks, st *store.Store) {
	orig, every := h.Progress, h.ProgressEvery
	if every == 0 {
		every = 10 * time.Second
	}
	h.ProgressEvery = min(every, store.LiveEvery)
	var next time.Duration
	started := false
	h.Progress = func(p check.Progress) {
		if !p.Final {
			// (On a terminal reports come every 250 ms: the file is
			// rewritten at most every LiveEvery all the same.)
			st.UpdateLive(false, func(l *store.Live) {
				r := lastLiveRun(l)
				if r == nil {
					return
				}
				e := p.Estimate
				r.Interleavings, r.Proportion, r.Size = p.Interleavings, e.Proportion, e.Size
				r.ElapsedSec, r.Races = max(p.Wall, e.Elapsed).Seconds(), p.Races
				r.Progress = progressLine(p)
			})
		}
		if orig == nil {
			return
		}
		if !started {
			// The first report comes about ProgressEvery after the start.
			started, next = true, p.Wall-h.ProgressEvery+every
		}
		if p.Final || p.Wall >= next {
			next = p.Wall + every
			orig(p)
		}
	}
}

// liveJSON is what ls --json and show --json add for a run a live process
// is writing.
type liveJSON struct {
	PID      int             `json:"pid"`
	Command  string          `json:"command"`
	Started  string          `json:"started"`
	Updated  string          `json:"updated"`
	Progress string          `json:"progress"`
	EstSize  float64         `json:"estimated_size"`
	EstProp  float64         `json:"estimated_proportion"`
	Elapsed  float64         `json:"elapsed_seconds"`
	Jobs     []store.LiveJob `json:"jobs,omitempty"`
	Note     string          `json:"note"`
}

// liveDoc is a live run as ls and show print it.
func liveDoc(l *store.Live, r store.LiveRun) storedRunJSON {
	return storedRunJSON{ID: r.ID, Created: stamp(r.Created), Updated: stamp(l.Updated), Command: r.Command, Program: r.Program,
		Status: string(store.StatusRunning), Message: r.Progress, Interleavings: r.Interleavings, Args: []string{},
		Live: &liveJSON{PID: l.PID, Command: l.Command, Started: stamp(l.Started), Updated: stamp(l.Updated), Progress: r.Progress,
			EstSize: r.Size, EstProp: r.Proportion, Elapsed: r.ElapsedSec, Jobs: r.Jobs,
			Note: "the run is being explored: its stored records (options, jobs, bugs, race candidates) can be read once that process ends"}}
}

// openOrWatch opens the store to read it; when a live process holds it
// instead, it returns what that process publishes (st nil).
func openOrWatch(cmd *cobra.Command) (*store.Store, *store.Live, error) {
	dir := storeDir(cmd)
	st, err := store.Open(dir, store.Options{ReadOnly: true, FS: storeFS})
	if err == nil {
		warnStore(cmd, st)
		return st, nil, nil
	}
	if errors.Is(err, store.ErrLocked) {
		l, lerr := store.ReadLive(dir)
		if lerr == nil {
			return nil, l, nil
		}
		if pid := store.LockHolder(dir); pid != 0 {
			return nil, &store.Live{PID: pid}, nil
		}
	}
	return nil, nil, storeErr(dir, err)
}

// heldLine says who holds the store and since when.
func heldLine(dir string, l *store.Live) string {
	if l.Command == "" {
		return fmt.Sprintf("store %s is in use by landslide process %d, which has published no progress yet", dir, l.PID)
	}
	return fmt.Sprintf("store %s is in use by landslide process %d (%s, started %s; progress as of %s)",
		dir, l.PID, l.Command, stamp(l.Started), stamp(l.Updated))
}

// lsLive is ls on a store a live process holds: the runs it writes, with
// their progress (exit 0).
func lsLive(cmd *cobra.Command, dir string, l *store.Live, asJSON bool) error {
	fmt.Fprintf(cmd.ErrOrStderr(), "landslide: %s; its other runs can be listed once that process ends (a store cannot be read while it is written)\n", heldLine(dir, l))
	docs := []storedRunJSON{}
	for _, r := range l.Runs {
		docs = append(docs, liveDoc(l, r))
	}
	out := cmd.OutOrStdout()
	if asJSON {
		return writeJSON(out, docs)
	}
	if len(docs) == 0 {
		fmt.Fprintf(out, "No run is being explored in %s.\n", dir)
		return nil
	}
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tCREATED\tCOMMAND\tPROGRAM\tSTATUS\tINTERLEAVINGS\tRESULT")
	for _, d := range docs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", d.ID, d.Created, d.Command, d.Program, d.Status, d.Interleavings, d.Message)
	}
	return tw.Flush()
}

// showLive is show on a store a live process holds: the run, if it is
// one the process writes, with its progress (exit 0); any other run
// cannot be read until the process ends (exit 2).
func showLive(cmd *cobra.Command, dir, ref string, l *store.Live, asJSON bool) error {
	var match []store.LiveRun
	for _, r := range l.Runs {
		if strings.HasPrefix(r.ID, ref) {
			match = append(match, r)
		}
	}
	if len(match) != 1 {
		return usageErr("%s, and run %s is not one it explores: it can be shown once that process ends (landslide ls shows what it runs)", heldLine(dir, l), ref)
	}
	d := liveDoc(l, match[0])
	out := cmd.OutOrStdout()
	if asJSON {
		return writeJSON(out, d)
	}
	writeLiveRun(out, dir, l, d)
	return nil
}

func writeLiveRun(out io.Writer, dir string, l *store.Live, d storedRunJSON) {
	fmt.Fprintf(out, "Run %s: %s %s\n", d.ID, d.Command, d.Program)
	fmt.Fprintf(out, "  created %s; %s\n", d.Created, heldLine(dir, l))
	fmt.Fprintf(out, "  status  %s\n", statusLine(d.Status, d.Message))
	for _, j := range d.Live.Jobs {
		fmt.Fprintf(out, "Job %d: running, %s\n", j.ID, j.Progress)
	}
	fmt.Fprintln(out, "Its options, jobs, bugs and race candidates can be shown once that process ends (a store cannot be read while it is written).")
}
