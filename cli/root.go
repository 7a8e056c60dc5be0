// Package cli holds landslide's cobra commands. cmd/landslide only mounts
// them, so tests run the commands in-process with their own output streams.
//
// Exit codes, shared by every command:
//
//	0  no bug (the program ran to its end, or the space was verified)
//	1  a bug was found
//	2  usage or input error (bad flags, unreadable or malformed ELF)
//	3  budget exhausted, or a limit of the checker reached (threads,
//	   memory, output), without finding a bug
package cli

import (
	"errors"
	"fmt"
	"github.com/spf13/pflag"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"landslide/check"
	"landslide/internal/gctune"
	"landslide/store"
)

// Exit codes.
const (
	ExitOK     = 0
	ExitBug    = 1
	ExitUsage  = 2
	ExitBudget = 3 // also a checker limit reached: no verdict either way
)

// exitError carries an exit code out of a command; its message (if any)
// has already been printed or is printed by Main.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErr(format string, a ...any) error {
	return &exitError{code: ExitUsage, msg: fmt.Sprintf(format, a...)}
}

// atLeast and exactly are the commands' positional-argument rules: a
// wrong count is a usage error that shows the usage line.
func atLeast(n int) cobra.PositionalArgs { return argCount(n, -1) }
func exactly(n int) cobra.PositionalArgs { return argCount(n, n) }

func argCount(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= min && (max < 0 || len(args) <= max) {
			return nil
		}
		what := "missing arguments"
		if len(args) > min {
			what = fmt.Sprintf("unexpected argument %q", args[max])
		}
		return usageErr("%s: %s (usage: %s)", cmd.Name(), what, strings.TrimSuffix(cmd.UseLine(), " [flags]"))
	}
}

// NewRoot builds the command tree.
func NewRoot() *cobra.Command {
	root, _ := newRoot()
	return root
}

func newRoot() (*cobra.Command, *profiler) {
	prof := &profiler{}
	root := &cobra.Command{
		Use:   "landslide",
		Short: "A stateless model checker for concurrent C programs on a deterministic RISC-V emulator",
		Long: `Landslide runs a concurrent C program (an RV64 ELF built against its guest SDK)
in a deterministic emulator, forces its threads through different
interleavings, and reports each failing interleaving with a readable trace.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(),
		// Flag values no command can use are refused in one place.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFlagValues(cmd); err != nil {
				return err
			}
			return prof.start()
		},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentFlags().String("store", DefaultStore, "the workspace store directory (also $LANDSLIDE_STORE)")
	addProfileFlags(root, prof)
	root.AddCommand(newRunCmd(), newExploreCmd(), newQuicksandCmd(), newCCCmd(), newResumeCmd(), newReplayCmd(), newMinimizeCmd(), newRacesCmd(),
		newLsCmd(), newShowCmd(), newBugsCmd(), newExportCmd(), newImportCmd(), newVerifyStoreCmd(), newVersionCmd(), newSuiteCmd())
	return root, prof
}

// positiveFlags must be above zero when given: 0 would be no thread
// limit, no instruction budget, a commit after every nothing; never what
// a user means. (explore and quicksand check their budget, interval,
// bound and worker flags with their combinations.)
var positiveFlags = []string{"max-threads", "max-pps", "max-instructions", "commit-every", "commit-interval"}

// naturalFlags must be at least zero, where 0 is "none"
// (--checkpoint-every 0: never).
var naturalFlags = []string{"checkpoint-every"}

// checkFlagValues refuses a numeric flag given a value out of its range
// (exit 2), for every command.
func checkFlagValues(cmd *cobra.Command) error {
	fl := cmd.Flags()
	check := func(names []string, ok func(float64) bool, want string) error {
		for _, name := range names {
			f := fl.Lookup(name)
			if f == nil || !f.Changed {
				continue
			}
			v, err := flagNumber(f.Value.String())
			if err == nil && !ok(v) {
				return usageErr("--%s %s: %s", name, f.Value.String(), want)
			}
		}
		return nil
	}
	var bad error
	fl.VisitAll(func(f *pflag.Flag) {
		if bad != nil || !f.Changed || (f.Value.Type() != "float64" && f.Value.Type() != "float32") {
			return
		}
		if v, err := strconv.ParseFloat(f.Value.String(), 64); err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			bad = usageErr("--%s %s: not a number Landslide can use", f.Name, f.Value.String())
		}
	})
	if bad != nil {
		return bad
	}
	if err := check(positiveFlags, func(v float64) bool { return v > 0 }, "must be above zero"); err != nil {
		return err
	}
	return check(naturalFlags, func(v float64) bool { return v >= 0 }, "must be at least 0 (0: never)")
}

// flagNumber reads a flag's value as a number: an integer, a float or a
// duration (in seconds).
func flagNumber(s string) (float64, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d.Seconds(), nil
	}
	return strconv.ParseFloat(s, 64)
}

// versionInfo is what landslide --version and landslide version say.
type versionInfo struct {
	Version        string `json:"version"`
	GoVersion      string `json:"go"`
	StoreFormat    int    `json:"store_format"`
	ArchiveVersion int    `json:"archive_format"`
}

func currentVersion() versionInfo {
	e := check.Env()
	return versionInfo{Version: e.Version, GoVersion: e.GoVersion, StoreFormat: store.FormatVersion, ArchiveVersion: store.ArchiveVersion}
}

func versionLine() string {
	v := currentVersion()
	return fmt.Sprintf("landslide %s, %s, store format %d, archive format %d", v.Version, v.GoVersion, v.StoreFormat, v.ArchiveVersion)
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print landslide's version and the store and archive format versions it reads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), currentVersion())
			}
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// argvListKey annotates the root command with the arguments it runs,
// joined by NUL bytes: the store records them with each run, one
// argument per element.
const argvListKey = "landslide.argv"

// commandLine is a stored run's arguments as a shell line. Runs stored
// before the arguments were kept one per element hold the whole line as
// one element, printed as it is.
func commandLine(args []string) string {
	if len(args) == 1 && strings.Contains(args[0], " ") {
		return args[0]
	}
	return strings.Join(quoteArgs(args), " ")
}

// quoteArgs quotes the arguments that a shell would split or expand.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$`\\*?[]{}();&|<>~#") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

// Main runs the command line and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	root, prof := newRoot()
	root.SetArgs(args)
	root.Annotations = map[string]string{argvListKey: strings.Join(args, "\x00")}
	root.SetOut(stdout)
	root.SetErr(stderr)
	code := exitCodeOf(root.Execute(), stderr)
	if err := prof.stop(); err != nil {
		fmt.Fprintf(stderr, "landslide: %v\n", err)
		if code == ExitOK {
			code = ExitUsage
		}
	}
	return code
}

// exitCodeOf is the exit code of a command's error, its message said.
func exitCodeOf(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(stderr, "landslide: %s\n", ee.msg)
		}
		return ee.code
	}
	// Cobra's own errors (unknown flag, wrong argument count) are usage errors.
	fmt.Fprintf(stderr, "landslide: %v\n", err)
	return ExitUsage
}

// Run is main's body: the collector set for exploration (tuneGC), then
// the command.
func Run() {
	gctune.Tune()
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}
