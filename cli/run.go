package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"landslide/check"
	"landslide/job"
	"landslide/report"
)

type runFlags struct {
	ppFlags
	schedule   string
	abortCodes bool
	weak       bool
	seed       int64
	json       bool
	noTrack    bool
	trace      bool
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run PROGRAM.elf [-- ARGS...]",
		Short: "Run one execution under a given, random or default schedule",
		Long: `Run executes the program once. At every preemption point the next thread is
chosen by --schedule (a comma-separated list of thread ids, then the default),
--seed (uniformly random, seeded), or by default by keeping the current thread
running and switching only where an ordinary scheduler would (yield, block,
exit).

The guest's output goes to stdout unchanged; the checker's own lines go to
stderr. With --json a single JSON summary is printed on stdout instead.
Exit codes: 0 no bug, 1 bug found, 2 usage or input error, 3 instruction
budget exhausted, or a limit of the checker reached (--max-threads,
--max-memory, the output limit): no bug, and no verdict.`,
		Args: atLeast(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRun(cmd, args, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.schedule, "schedule", "", "choices, e.g. 1,1,2,1 (thread per transition; the default schedule continues after the list)")
	fl.Int64Var(&f.seed, "seed", -1, "choose uniformly at random at every PP with this seed (and flip a coin for each transaction: it starts or aborts with RETRY; not under -W)")
	fl.BoolVar(&f.json, "json", false, "print one JSON summary on stdout (the guest's output included)")
	f.ppFlags.register(fl)
	fl.BoolVar(&f.noTrack, "no-track", false, "do not record shared-memory accesses")
	fl.BoolVar(&f.trace, "trace", false, "print every transition and its sync events on stderr")
	fl.BoolVarP(&f.abortCodes, "abort-codes", "A", false, "transactions abort with distinct statuses (EXPLICIT from _xabort, CAPACITY from a system call) instead of RETRY")
	fl.BoolVarP(&f.weak, "weak-atomicity", "W", false, "weak atomicity: transactions are atomic only with respect to each other, with PPs and system calls inside them")
	return cmd
}

// loadELF reads a program file, turning every problem into a usage error.
func loadELF(path string) ([]byte, error) {
	data, err := check.LoadELF(path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return data, nil
}

func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runRun(cmd *cobra.Command, args []string, f *runFlags) error {
	path := args[0]
	if cmd.Flags().Changed("schedule") && f.seed >= 0 {
		return usageErr("--schedule and --seed are mutually exclusive")
	}
	var choices []check.Choice
	if f.schedule != "" {
		cs, err := check.ParseSchedule(f.schedule)
		if err != nil {
			return usageErr("--schedule: %v", err)
		}
		choices = cs
	}
	data, err := loadELF(path)
	if err != nil {
		return err
	}
	pps, err := f.ppFlags.config(data, cmd.Flags().Changed("pp"))
	if err != nil {
		return err
	}
	f.ppFlags.noteTestConfig(cmd.ErrOrStderr(), false)
	cfg := pps.Kernel
	cfg.NoTrack = f.noTrack
	cfg.HTM.AbortCodes, cfg.HTM.Weak = f.abortCodes, f.weak
	cfg.Args = append([]string{path}, args[1:]...)
	ex, err := check.Execute(data, path, cfg, check.Schedule{Choices: choices, Seed: f.seed})
	if err != nil {
		return usageErr("%v", err)
	}
	out, syms := ex.Outcome, ex.Syms
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	code := ExitOK
	switch {
	case out.Bug != nil:
		code = ExitBug
	case out.Budget, ex.Limit != nil:
		code = ExitBudget
	}
	replay := ex.Replay
	limit := report.NewBug(ex.Limit, syms)
	if f.json {
		sum := sha256.Sum256(data)
		doc := RunJSON{
			Program: path, SHA256: hex.EncodeToString(sum[:]), Result: resultName(code), ExitCode: code,
			ExitStatus: out.ExitStatus, Stdout: string(out.Stdout), PPs: out.PPs,
			Instructions: out.Instructions, Schedule: check.FormatSchedule(out.Schedule),
			TraceHash: hex.EncodeToString(out.Hash[:]), Bugs: []*BugJSON{},
			Leaks: len(out.Leaks), Replay: replay, Limit: newLimitJSON(limit, replay),
		}
		if out.Bug != nil {
			_, sig := job.Signature(syms, out.Bug)
			doc.Bugs = append(doc.Bugs, newBugJSON(report.NewBug(out.Bug, syms), sig, nil, nil))
		}
		if limit != nil {
			doc.Result = "limit"
		}
		if err := writeJSON(stdout, doc); err != nil {
			return err
		}
		return &exitError{code: code}
	}
	stdout.Write(out.Stdout)
	if f.trace {
		for i, t := range out.Transitions {
			fmt.Fprintf(stderr, "#%d thread %d: %d instructions, %d shared accesses, ends at %s", i, t.Thread, t.Instructions, len(t.Accesses), t.PP)
			if len(t.Stack) > 0 {
				fmt.Fprintf(stderr, " in %s", syms.Describe(t.Stack[0], false))
			}
			fmt.Fprintln(stderr)
			for _, e := range t.Sync {
				fmt.Fprintf(stderr, "      %s\n", report.SyncEventTrace(e))
			}
		}
	}
	for _, d := range out.Diagnostics {
		fmt.Fprint(stderr, d)
	}
	fmt.Fprintf(stderr, "landslide: %d preemption points, %d instructions, trace %x\n", out.PPs, out.Instructions, out.Hash[:])
	switch {
	case out.Bug != nil:
		report.NewBug(out.Bug, syms).WriteText(stderr)
		fmt.Fprintf(stderr, "Replay: %s\n", replay)
	case limit != nil:
		writeLimitText(stderr, limit, replay)
	case out.Budget:
		fmt.Fprintf(stderr, "landslide: instruction budget exhausted after %d instructions without a bug (raise --max-instructions)\n", out.Instructions)
	default:
		fmt.Fprintf(stderr, "landslide: program exited with status %d, no bug\n", out.ExitStatus)
		if len(out.Leaks) > 0 {
			fmt.Fprintf(stderr, "landslide: note: %d heap blocks were never freed\n", len(out.Leaks))
		}
	}
	return &exitError{code: code}
}

// writeLimitText says, on w, that an execution went past a limit of the
// checker: which, where, and the command that replays it.
func writeLimitText(w io.Writer, l *report.Bug, replay string) {
	fmt.Fprintf(w, "Limit reached (not a bug): %s\n", l.Message)
	if len(l.Stack) > 0 {
		fmt.Fprintf(w, "Current stack (thread %d):\n", l.Thread)
		for _, f := range l.Stack {
			fmt.Fprintf(w, "    %s\n", f.Text)
		}
	}
	if replay != "" {
		fmt.Fprintf(w, "Replay: %s\n", replay)
	}
}

// outcomeResult is a check's "result" in JSON: resultName's, or "limit".
func outcomeResult(o check.Outcome, code int) string {
	if o == check.Limit {
		return "limit"
	}
	return resultName(code)
}

func resultName(code int) string {
	switch code {
	case ExitBug:
		return "bug"
	case ExitBudget:
		return "budget"
	}
	return "ok"
}
