package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"landslide/emu/elfsym"
	"landslide/kernel"
	"landslide/record"
	"landslide/report"
	"landslide/schedule"
)

type runFlags struct {
	ppFlags
	schedule string
	seed     int64
	json     bool
	noTrack  bool
	trace    bool
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
Exit codes: 0 no bug, 1 bug found, 2 usage or input error, 3 budget exhausted.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRun(cmd, args, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.schedule, "schedule", "", "choices, e.g. 1,1,2,1 (thread per transition; the default schedule continues after the list)")
	fl.Int64Var(&f.seed, "seed", -1, "choose uniformly at random at every PP with this seed")
	fl.BoolVar(&f.json, "json", false, "print one JSON summary on stdout (the guest's output included)")
	f.ppFlags.register(fl)
	fl.BoolVar(&f.noTrack, "no-track", false, "do not record shared-memory accesses")
	fl.BoolVar(&f.trace, "trace", false, "print every transition and its sync events on stderr")
	return cmd
}

// loadELF reads a program file, turning every problem into a usage error.
func loadELF(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if _, err := elfsym.Parse(data); err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	return data, nil
}

// parseAddr reads 0x1234, 1234 or symbol+offset against the program.
func parseAddr(s string, syms *elfsym.Symbols) (uint64, error) {
	if v, err := strconv.ParseUint(s, 0, 64); err == nil {
		return v, nil
	}
	name, off, _ := strings.Cut(s, "+")
	base, _, ok := syms.Lookup(name)
	if !ok {
		return 0, fmt.Errorf("%q: no such symbol in the program", name)
	}
	var o uint64
	if off != "" {
		var err error
		if o, err = strconv.ParseUint(off, 0, 64); err != nil {
			return 0, fmt.Errorf("%q: bad offset %q", s, off)
		}
	}
	return base + o, nil
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
	data, err := loadELF(path)
	if err != nil {
		return err
	}
	cfg, err := f.ppFlags.config(data, cmd.Flags().Changed("pp"))
	if err != nil {
		return err
	}
	f.ppFlags.noteTestConfig(cmd.ErrOrStderr(), false)
	cfg.NoTrack = f.noTrack
	cfg.Args = append([]string{path}, args[1:]...)
	var ch schedule.Chooser = schedule.Default{}
	if f.seed >= 0 {
		ch = schedule.NewRandom(uint64(f.seed))
	}
	if f.schedule != "" {
		cs, err := schedule.Parse(f.schedule)
		if err != nil {
			return usageErr("--schedule: %v", err)
		}
		ch = schedule.Script{Choices: cs}
	}
	k, err := kernel.New(data, cfg)
	if err != nil {
		return usageErr("%s: %v", path, err)
	}
	out, err := k.Play(ch)
	if err != nil {
		return usageErr("%v", err)
	}
	syms := k.Symbols()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	code := ExitOK
	switch {
	case out.Bug != nil:
		code = ExitBug
	case out.Budget:
		code = ExitBudget
	}
	replay := fmt.Sprintf("landslide run %s --schedule %s", path, schedule.Format(out.Schedule))
	if f.json {
		sum := sha256.Sum256(data)
		doc := RunJSON{
			Program: path, SHA256: hex.EncodeToString(sum[:]), Result: resultName(code), ExitCode: code,
			ExitStatus: out.ExitStatus, Stdout: string(out.Stdout), PPs: out.PPs,
			Instructions: out.Instructions, Schedule: schedule.Format(out.Schedule),
			TraceHash: hex.EncodeToString(out.Hash[:]), Bug: report.NewBug(out.Bug, syms),
			Leaks: len(out.Leaks), Replay: replay,
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
				fmt.Fprintf(stderr, "      %s\n", syncText(e))
			}
		}
	}
	for _, d := range out.Diagnostics {
		fmt.Fprint(stderr, d)
	}
	fmt.Fprintf(stderr, "landslide: %d preemption points, %d instructions, trace %x\n", out.PPs, out.Instructions, out.Hash[:8])
	switch {
	case out.Bug != nil:
		report.NewBug(out.Bug, syms).WriteText(stderr)
		fmt.Fprintf(stderr, "Replay: %s\n", replay)
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

func resultName(code int) string {
	switch code {
	case ExitBug:
		return "bug"
	case ExitBudget:
		return "budget"
	}
	return "ok"
}

// syncText describes a sync event for --trace.
func syncText(e record.SyncEvent) string {
	switch e.Kind {
	case record.SyncCreate:
		return fmt.Sprintf("creates thread %d", e.Other)
	case record.SyncUnblock:
		return fmt.Sprintf("makes thread %d runnable", e.Other)
	case record.SyncEnter, record.SyncReturn:
		return fmt.Sprintf("%s %s(0x%x)", e.Kind, e.Func, e.Arg)
	case record.SyncAlloc, record.SyncFree:
		return fmt.Sprintf("%s block #%d (generation %d) at 0x%x", e.Kind, e.Block, e.Gen, e.Arg)
	}
	return e.Kind.String()
}
