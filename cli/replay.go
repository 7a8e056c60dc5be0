package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"landslide/check"
	"landslide/report"
	"landslide/store"
)

// findTrace resolves RUN[/JOB[/TRACE]], or a bug's signature (or a
// unique prefix of one, as `landslide bugs` prints it), to a stored trace.
func findTrace(st *store.Store, ref string) (*store.Run, *store.TraceRecord, error) {
	parts := strings.Split(ref, "/")
	if len(parts) > 3 {
		return nil, nil, fmt.Errorf("%q: want RUN, RUN/JOB, RUN/JOB/TRACE or a bug signature", ref)
	}
	run, err := st.Run(parts[0])
	if errors.Is(err, store.ErrNotFound) && len(parts) == 1 {
		return findBug(st, ref)
	}
	if err != nil {
		return nil, nil, err
	}
	nums := []int{0, 0}
	for i, p := range parts[1:] {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, nil, fmt.Errorf("%q: %q is not a job or trace number", ref, p)
		}
		nums[i] = n
	}
	trs, err := st.Traces(run.ID)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range trs {
		if (nums[0] == 0 || t.Job == nums[0]) && (nums[1] == 0 || t.ID == nums[1]) {
			return run, t, nil
		}
	}
	return nil, nil, fmt.Errorf("run %s has no stored trace %s (only bugs' traces are stored)", run.ID, ref)
}

// openTrace opens the workspace and finds the trace ref names (findTrace);
// the caller closes the store.
func openTrace(cmd *cobra.Command, ref string, readOnly bool) (*store.Store, *store.Run, *store.TraceRecord, error) {
	st, err := openStore(cmd, readOnly)
	if err != nil {
		return nil, nil, nil, err
	}
	run, tr, err := findTrace(st, ref)
	if err != nil {
		st.Close()
		return nil, nil, nil, readErr(st.Dir(), err)
	}
	return st, run, tr, nil
}

// traceFormat checks a --format of a trace report (writeTrace).
func traceFormat(format string) error {
	if format != "text" && format != "html" && format != "json" {
		return usageErr("--format: want text, html or json, not %q", format)
	}
	return nil
}

// findBug finds the trace of the first bug (in run order) whose signature
// starts with sig.
func findBug(st *store.Store, sig string) (*store.Run, *store.TraceRecord, error) {
	bugs, err := st.Bugs("")
	if err != nil {
		return nil, nil, err
	}
	for _, b := range bugs {
		if strings.HasPrefix(b.Signature, sig) {
			run, err := st.Run(b.Run)
			if err != nil {
				return nil, nil, err
			}
			tr, err := st.Trace(b.Run, b.Job, b.Trace)
			return run, tr, err
		}
	}
	return nil, nil, fmt.Errorf("no run and no bug signature matches %q: %w", sig, store.ErrNotFound)
}

func newReplayCmd() *cobra.Command {
	var format string
	var step, fromStart bool
	cmd := &cobra.Command{
		Use:   "replay RUN[/JOB[/TRACE]] | BUG-SIGNATURE",
		Short: "Re-execute a stored bug trace, check it reproduces, and show its report",
		Long: `Replay re-executes a stored trace (a bug found by explore) from the nearest
stored checkpoint on its prefix (or, with --from-start, from the program's
start), checks that every transition is bit-identical to the stored one,
and prints the bug report as text, HTML or JSON. --step prints each
transition as it is re-executed. Exit 1 when the trace reproduces its bug,
2 when it does not reproduce (or on input errors).`,
		Args: exactly(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := traceFormat(format); err != nil {
				return err
			}
			st, run, tr, err := openTrace(cmd, args[0], true)
			if err != nil {
				return err
			}
			defer st.Close()
			out := cmd.OutOrStdout()
			opt := check.ReplayOptions{FromStart: fromStart}
			if step {
				opt.Step = func(i int, t *check.Transition) {
					fmt.Fprintf(out, "#%d thread %d -> %s (%d instructions, %d shared accesses)\n",
						i, t.Thread, report.PPLabel(t.PP), t.Instructions, len(t.Accesses))
				}
			}
			res, err := check.Replay(st, run, tr, opt)
			var se *check.StoreError
			if errors.As(err, &se) {
				return storeErr(se.Dir, se.Err)
			}
			if err != nil {
				return usageErr("replaying run %s trace %d: %v", run.ID, tr.ID, err)
			}
			from := "the program's start"
			if res.From > 0 {
				from = fmt.Sprintf("the checkpoint at PP %d", res.From)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "landslide: replayed %d transitions from %s: identical to the stored trace\n", len(res.Transitions)-res.From, from)
			if res.Report == nil {
				fmt.Fprintln(out, "The trace ends without a bug.")
				return nil
			}
			if err := writeTrace(out, format, res.Report); err != nil {
				return err
			}
			return &exitError{code: ExitBug}
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "report format: text, html or json")
	cmd.Flags().BoolVar(&step, "step", false, "print each transition as it is re-executed")
	cmd.Flags().BoolVar(&fromStart, "from-start", false, "re-execute from the program's start, not from the nearest checkpoint")
	return cmd
}

func newRacesCmd() *cobra.Command {
	var hb string
	var jobID int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "races RUN",
		Short: "Re-run data-race analysis offline over a run's stored interleavings",
		Long: `Races re-analyses every stored interleaving of one job of a run with the
chosen happens-before mode (--hb limited or pure), without executing the
program, and prints the data-race candidates with their classification
(both-order or single-order, first interleaving or nondeterministic,
free-re-malloc). The answer depends only on the store: the same command
twice gives the same output.`,
		Args: exactly(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mode, err := check.ParseHB(hb)
			if err != nil {
				return usageErr("--hb: %v", err)
			}
			st, run, err := openRun(cmd, args[0], true)
			if err != nil {
				return err
			}
			defer st.Close()
			off, err := check.Races(st, run, jobID, mode)
			var se *check.StoreError
			if errors.As(err, &se) {
				return storeErr(se.Dir, se.Err)
			}
			if err != nil {
				return usageErr("%v", err)
			}
			cands, n, races, syms := off.Candidates, off.Interleavings, off.Races, off.Syms
			out := cmd.OutOrStdout()
			if asJSON {
				doc := struct {
					Run           string     `json:"run"`
					HB            string     `json:"hb"`
					Interleavings int        `json:"interleavings"`
					Races         []RaceJSON `json:"races"`
				}{Run: run.ID, HB: mode.String(), Interleavings: n, Races: []RaceJSON{}}
				for i, c := range cands {
					r := newRaceJSON(c, races[i].A.Stack, races[i].B.Stack)
					r.A.Where, r.B.Where = syms.Describe(c.A.PC, false).String(), syms.Describe(c.B.PC, false).String()
					doc.Races = append(doc.Races, r)
				}
				return writeJSON(out, doc)
			}
			fmt.Fprintf(out, "Run %s, %s happens-before, over %d stored interleavings (nothing re-executed):\n", run.ID, mode, n)
			report.WriteRaces(out, races)
			return nil
		},
	}
	cmd.Flags().StringVar(&hb, "hb", "limited", "happens-before mode: limited or pure")
	cmd.Flags().IntVar(&jobID, "job", 1, "the job of the run")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
