package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"landslide/check"
	"landslide/report"
	"landslide/store"
)

func newMinimizeCmd() *cobra.Command {
	var format string
	var budget time.Duration
	var quiet bool
	cmd := &cobra.Command{
		Use:   "minimize RUN[/JOB[/TRACE]] | BUG-SIGNATURE",
		Short: "Find a stored bug with the fewest preemptions, and the nearest interleaving without it",
		Long: `Minimize takes a stored bug trace (a run, a job, a trace, or a bug's
signature as "landslide bugs" lists it) and searches the job's own state
space (its PP set and limits) for the same bug (same kind and failing
location) with the fewest preemptions: every interleaving with at most 0,
then 1, ... preemptions, up to the original's count, until one has the bug.
Then it reverses, one pair at a time, the conflicting accesses of two
threads in the minimal trace, and names the first reversal after which the
program ends without the bug: what the bug needs.

The minimal trace is kept in the store next to the original (as trace
RUN/JOB/N, the original unchanged), and shown instead of it by "replay".
A proved minimization already stored is shown again without searching.
--budget bounds the search; when it runs out, the trace with the fewest
preemptions found so far is kept and the report says how far the search
got. Exit 1: the minimal trace's bug is shown; 2 on errors; 130 when
interrupted.`,
		Args: exactly(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := traceFormat(format); err != nil {
				return err
			}
			if budget <= 0 {
				return usageErr("--budget %s: want a positive duration", budget)
			}
			st, run, tr, err := openTrace(cmd, args[0], false)
			if err != nil {
				return err
			}
			defer st.Close()
			var hooks check.Hooks
			if !quiet {
				(&outputFlags{interval: 10 * time.Second}).attach(&hooks, cmd.ErrOrStderr())
			}
			ctx, stop := interruptContext(cmd)
			defer stop()
			fmt.Fprintf(cmd.ErrOrStderr(), "landslide: minimizing trace %s/%d/%d (at most %s)\n", run.ID, tr.Job, tr.ID, budget)
			m, err := check.MinimizeStored(ctx, st, run, tr, check.MinimizeLimits{Budget: budget}, hooks)
			var se *check.StoreError
			if errors.As(err, &se) {
				return storeErr(se.Dir, se.Err)
			}
			if err != nil {
				return usageErr("minimizing run %s trace %d: %v", run.ID, tr.ID, err)
			}
			if m.Reused {
				fmt.Fprintf(cmd.ErrOrStderr(), "landslide: trace %s/%d/%d is the stored minimization, proved minimal\n", run.ID, m.Stored.Job, m.Stored.ID)
			} else if m.Stored != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "landslide: kept as trace %s/%d/%d (replay it with: %s)\n", run.ID, m.Stored.Job, m.Stored.ID,
					again(st.Dir(), "replay", fmt.Sprintf("%s/%d/%d", run.ID, m.Stored.Job, m.Stored.ID)))
			}
			if err := writeTrace(cmd.OutOrStdout(), format, m.Trace); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return &exitError{code: ExitKilled}
			}
			return &exitError{code: ExitBug}
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "report format: text, html or json")
	cmd.Flags().DurationVar(&budget, "budget", check.MaxMinimizeBudget, "time the search for fewer preemptions may take")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress reports")
	return cmd
}

// writeTrace writes a trace report in format (text, html or json).
func writeTrace(out io.Writer, format string, t *report.Trace) error {
	switch format {
	case "html":
		return t.WriteHTML(out)
	case "json":
		return t.WriteJSON(out)
	}
	return t.WriteText(out)
}

// minimizeFound replaces the trace of the bug an exploration of cfg
// found by its minimization (check.MinimizeFound, within a share of the
// budget), kept in st when the run is stored. If it fails, the trace as
// found stays, with a warning.
func minimizeFound(ctx context.Context, cmd *cobra.Command, cfg check.Config, res *check.ExploreResult, st *store.Store, quiet bool) {
	if cfg.Linearizability {
		return // the judge's bugs are not minimized (minimize.Minimize)
	}
	stderr := cmd.ErrOrStderr()
	budget := check.MinimizeBudget(cfg.Budget)
	if !quiet {
		fmt.Fprintf(stderr, "landslide: minimizing the bug's trace (%d %s; at most %s; --no-minimize shows it as found)\n",
			res.BugBranch.Preemptions, plural(res.BugBranch.Preemptions, "preemption"), budget.Round(time.Millisecond))
	}
	m, err := check.MinimizeFound(ctx, cfg, res, st, budget)
	if err != nil {
		fmt.Fprintf(stderr, "landslide: warning: minimizing the trace: %v\n", err)
	}
	if m != nil {
		res.Trace = m.Trace
	}
}
