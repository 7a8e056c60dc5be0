package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"landslide/quicksand"
	"landslide/store"
)

// writeJSON is every command's JSON output: indented, snake_case keys
// (each type's tags; TestJSONKeys checks them), and no HTML escaping of
// <, > and & (the output is read by scripts and people, not browsers).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func stamp(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05")
}

type storedRunJSON struct {
	ID      string    `json:"id"`
	Created string    `json:"created"`
	Updated string    `json:"updated"`
	Command string    `json:"command"`
	Program string    `json:"program"`
	SHA256  string    `json:"sha256"` // the program file's
	Args    []string  `json:"args"`
	Status  string    `json:"status"`
	Message string    `json:"message"`
	Env     store.Env `json:"env"`
	Jobs    []jobJSON `json:"jobs,omitempty"`
	Bugs    []bugJSON `json:"bugs,omitempty"`
	RaceCnt int       `json:"race_candidates"`
	// Interleavings sums the jobs' interleavings as explore counts them
	// (not the executions stopped or abandoned asleep).
	Interleavings int `json:"interleavings"`
	// Live: the run is being explored by the process holding the store
	// (what it publishes; the rest of the run cannot be read until then).
	Live *liveJSON `json:"live,omitempty"`
}

type jobJSON struct {
	ID            int      `json:"id"`
	PPSet         []string `json:"pp_set"`
	Status        string   `json:"status"`
	Interleavings int      `json:"interleavings"`
	Executed      int      `json:"executed"`
	Complete      bool     `json:"complete"`
	EstSize       float64  `json:"estimated_size"`
	EstProportion float64  `json:"estimated_proportion"`
	ElapsedSec    float64  `json:"elapsed_seconds"`
	Commits       int      `json:"commits"`
	Note          string   `json:"note,omitempty"`
}

// bugJSON is a stored bug: where its trace is (RUN/JOB/TRACE: replay
// takes it), what failed, and the function names of the failing stack
// (innermost first) that its signature covers. A stack of frames, and
// the trace itself, are under "stack" and "trace" in the BugJSON of the
// commands that explore.
type bugJSON struct {
	Run       string   `json:"run"`
	Job       int      `json:"job"`
	Trace     int      `json:"trace_id"`
	Kind      string   `json:"kind"`
	Message   string   `json:"message"`
	Signature string   `json:"signature"`
	Stack     []string `json:"functions"`
}

func runDoc(st *store.Store, r *store.Run, full bool) (storedRunJSON, error) {
	d := storedRunJSON{ID: r.ID, Created: stamp(r.Created), Updated: stamp(r.Updated), Command: r.Command, Program: r.Program,
		SHA256: r.Binary, Args: r.Args, Status: string(r.Status), Message: r.Message, Env: r.Env}
	// A reader opens a store only when no process holds it: a run still
	// marked running lost its process (a kill, a crash, a power cut).
	interrupted := r.Status == store.StatusRunning
	if interrupted {
		d.Status = statusInterrupted
		d.Message = fmt.Sprintf("interrupted: its process ended before the run did (`%s` continues it)", again(st.Dir(), "resume", r.ID))
	}
	jobs, err := st.Jobs(r.ID)
	if err != nil {
		return d, err
	}
	stored := map[int]bool{}
	for _, j := range jobs {
		d.Interleavings += j.Interleavings
		stored[j.ID] = true
		if full {
			d.Jobs = append(d.Jobs, jobJSON{ID: j.ID, PPSet: j.PPSet, Status: string(j.Status), Interleavings: j.Interleavings,
				Executed: j.Executed, Complete: j.Complete, EstSize: j.EstSize, EstProportion: j.EstProportion,
				ElapsedSec: time.Duration(j.Elapsed).Seconds(), Commits: j.Commits})
		}
	}
	// A Quicksand run's job table is the word on every job's status, and
	// holds the jobs that never committed (cancelled or never started).
	if s, err := quicksand.Decode(r.State); full && r.Command == "quicksand" && err == nil {
		byID := map[int]int{}
		for i, j := range d.Jobs {
			byID[j.ID] = i
		}
		for _, j := range s.Jobs {
			i, ok := byID[j.ID]
			if !ok {
				set := strings.TrimSuffix(strings.TrimPrefix(s.JobPPs(j), "{ "), " }")
				d.Jobs = append(d.Jobs, jobJSON{ID: j.ID, PPSet: []string{set}, Interleavings: j.Interleavings})
				i = len(d.Jobs) - 1
			}
			d.Jobs[i].Status, d.Jobs[i].Note = j.Status.String(), j.Note
			if j.Status == quicksand.LimitReached && j.Note == "" {
				d.Jobs[i].Note = j.Limit
			}
		}
		sort.Slice(d.Jobs, func(a, b int) bool { return d.Jobs[a].ID < d.Jobs[b].ID })
	}
	if interrupted {
		for i := range d.Jobs {
			if d.Jobs[i].Status == string(store.StatusRunning) {
				d.Jobs[i].Status = statusInterrupted
			}
		}
	}
	for _, j := range jobs {
		rr, err := st.Races(r.ID, j.ID)
		if err != nil {
			return d, err
		}
		d.RaceCnt += len(rr)
	}
	if full {
		bugs, err := st.Bugs(r.ID)
		if err != nil {
			return d, err
		}
		for _, b := range bugs {
			d.Bugs = append(d.Bugs, bugDoc(b))
		}
	}
	return d, nil
}

// statusInterrupted is the status ls and show give a run stored as
// running whose process is gone.
const statusInterrupted = "interrupted"

func bugDoc(b *store.BugRecord) bugJSON {
	return bugJSON{Run: b.Run, Job: b.Job, Trace: b.Trace, Kind: b.Kind.String(), Message: b.Message, Signature: b.Signature, Stack: b.Funcs}
}

func newLsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the runs in the store",
		Long: `ls lists the runs in the store with their status and result. A run stored
as running whose process ended (a kill, a crash) is "interrupted", with the
resume command that continues it. While a process writes to the store
(explore, quicksand, resume, import), the store cannot be read: ls then
prints the runs that process explores, with the live progress it publishes
in the store's status file, and exits 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, live, err := openOrWatch(cmd)
			if err != nil {
				return err
			}
			if live != nil {
				return lsLive(cmd, storeDir(cmd), live, asJSON)
			}
			defer st.Close()
			// A damaged store lists what it can: the runs that read, each
			// damaged one marked, then the damage (exit 2).
			var damage []error
			runs, err := st.Runs()
			if err != nil {
				damage = append(damage, err)
			}
			docs := []storedRunJSON{}
			for _, r := range runs {
				d, err := runDoc(st, r, false)
				if err != nil {
					d = storedRunJSON{ID: r.ID, Created: stamp(r.Created), Command: r.Command, Program: r.Program,
						Status: "damaged", Message: "its records cannot be read (landslide verify-store)"}
					damage = append(damage, err)
				} else if lost := st.LostRun(r.ID); len(lost) > 0 {
					d.Status, d.Message = "damaged", lost[0].String()
					damage = append(damage, lostErr(st, r.ID))
				}
				docs = append(docs, d)
			}
			// Runs the counter knows that the store lost entirely.
			listed := map[string]bool{}
			for _, r := range runs {
				listed[r.ID] = true
			}
			for _, l := range st.Lost() {
				if !listed[l.Run] {
					listed[l.Run] = true
					damage = append(damage, usageErr("store %s: %s", st.Dir(), l))
				}
			}
			out := cmd.OutOrStdout()
			switch {
			case asJSON:
				if err := writeJSON(out, docs); err != nil {
					return err
				}
			case len(docs) == 0:
				fmt.Fprintf(out, "No runs in %s.\n", st.Dir())
			default:
				tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "RUN\tCREATED\tCOMMAND\tPROGRAM\tSTATUS\tINTERLEAVINGS\tRESULT")
				for _, d := range docs {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", d.ID, d.Created, d.Command, d.Program, d.Status, d.Interleavings, d.Message)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if len(damage) == 0 {
				return nil
			}
			var ee *exitError
			if errors.As(damage[0], &ee) {
				return ee
			}
			return storeErr(st.Dir(), damage[0])
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show a run: its options, environment, jobs, bugs and race candidates",
		Long: `show prints a run: its command line, environment, status, jobs with their
estimates, bugs and race candidates. While a process writes to the store,
show of a run it explores prints its live progress (exit 0); any other run
can be shown once the process ends.`,
		Args: exactly(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, live, err := openOrWatch(cmd)
			if err != nil {
				return err
			}
			if live != nil {
				return showLive(cmd, storeDir(cmd), args[0], live, asJSON)
			}
			st, r, err := findRun(cmd, st, args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			d, err := runDoc(st, r, true)
			if err != nil {
				return storeErr(st.Dir(), err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, d)
			}
			fmt.Fprintf(out, "Run %s: %s %s\n", d.ID, d.Command, d.Program)
			if len(d.Args) > 0 {
				fmt.Fprintf(out, "  command landslide %s\n", commandLine(d.Args))
			}
			fmt.Fprintf(out, "  created %s, updated %s\n", d.Created, d.Updated)
			fmt.Fprintf(out, "  binary  sha256 %s\n", d.SHA256)
			fmt.Fprintf(out, "  machine %s/%s, %d CPUs, %s, landslide %s, host %s\n", d.Env.OS, d.Env.Arch, d.Env.CPUs, d.Env.GoVersion, d.Env.Version, d.Env.Host)
			fmt.Fprintf(out, "  status  %s\n", statusLine(d.Status, d.Message))
			for _, j := range d.Jobs {
				status := j.Status
				if j.Note != "" {
					status += " (" + j.Note + ")"
				}
				if j.Commits == 0 {
					fmt.Fprintf(out, "Job %d {%s}: %s, never committed\n", j.ID, strings.Join(j.PPSet, ", "), status)
					continue
				}
				fmt.Fprintf(out, "Job %d {%s}: %s, %d interleavings (%d run), estimated %.1f%% of about %.0f, %s, %d commits\n",
					j.ID, strings.Join(j.PPSet, ", "), status, j.Interleavings, j.Executed, 100*j.EstProportion, j.EstSize,
					(time.Duration(j.ElapsedSec * float64(time.Second))).Round(time.Millisecond), j.Commits)
			}
			for _, b := range d.Bugs {
				fmt.Fprintf(out, "Bug (trace %s/%d/%d, signature %s): %s: %s\n    in %s\n", b.Run, b.Job, b.Trace, b.Signature, b.Kind, b.Message, strings.Join(b.Stack, " < "))
			}
			fmt.Fprintf(out, "Data-race candidates: %d (landslide races %s)\n", d.RaceCnt, d.ID)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newBugsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "bugs [RUN...]",
		Short: "List bugs, deduplicated by signature across runs (e.g. across graded submissions)",
		Long: `Bugs lists the bugs of the given runs (default: every run in the store),
grouped by signature: the bug's kind, the failing instruction as
function+offset, and the function names of the failing stack. A grader who
imports one archive per submission sees which submissions share a bug.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd, true)
			if err != nil {
				return err
			}
			defer st.Close()
			// Run by run, oldest first (not in the store's key order:
			// run IDs are random), so that a group lists its runs in the
			// order they were made.
			var runs []*store.Run
			if len(args) == 0 {
				if runs, err = st.Runs(); err != nil {
					return storeErr(st.Dir(), err)
				}
			}
			for _, a := range args {
				r, err := st.Run(a)
				if err != nil {
					return storeErr(st.Dir(), err)
				}
				runs = append(runs, r)
			}
			var bugs []*store.BugRecord
			for _, r := range runs {
				bs, err := st.Bugs(r.ID)
				if err != nil {
					return storeErr(st.Dir(), err)
				}
				bugs = append(bugs, bs...)
			}
			type group struct {
				Signature string    `json:"signature"`
				Kind      string    `json:"kind"`
				Message   string    `json:"message"`
				Stack     []string  `json:"functions"`
				Count     int       `json:"count"`
				Runs      []string  `json:"runs"`
				Bugs      []bugJSON `json:"bugs"`
			}
			var groups []*group
			bySig := map[string]*group{}
			for _, b := range bugs {
				g := bySig[b.Signature]
				if g == nil {
					g = &group{Signature: b.Signature, Kind: b.Kind.String(), Message: b.Message, Stack: b.Funcs}
					bySig[b.Signature] = g
					groups = append(groups, g)
				}
				g.Count++
				if !slices.Contains(g.Runs, b.Run) {
					g.Runs = append(g.Runs, b.Run)
				}
				g.Bugs = append(g.Bugs, bugDoc(b))
			}
			slices.SortStableFunc(groups, func(a, b *group) int {
				return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Signature, b.Signature))
			})
			out := cmd.OutOrStdout()
			if asJSON {
				if groups == nil {
					groups = []*group{}
				}
				return writeJSON(out, groups)
			}
			if len(groups) == 0 {
				fmt.Fprintln(out, "No bugs.")
				return nil
			}
			fmt.Fprintf(out, "%d %s, %d distinct:\n", len(bugs), plural(len(bugs), "bug"), len(groups))
			for _, g := range groups {
				fmt.Fprintf(out, "%s  %dx  %s: %s\n    in %s\n    runs: %s\n", g.Signature, g.Count, g.Kind, g.Message,
					strings.Join(g.Stack, " < "), strings.Join(g.Runs, " "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newExportCmd() *cobra.Command {
	var output string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "export RUN -o FILE",
		Short: "Write a run to a single-file archive (binary, options, results, bug traces, races)",
		Args:  exactly(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output == "" {
				return usageErr("export needs -o FILE")
			}
			st, r, err := openRun(cmd, args[0], true)
			if err != nil {
				return err
			}
			defer st.Close()
			tmp, err := os.CreateTemp(filepath.Dir(output), ".landslide-export-*")
			if err != nil {
				return usageErr("%v", err)
			}
			defer os.Remove(tmp.Name())
			if err := st.Export(r.ID, tmp); err != nil {
				tmp.Close()
				if errors.Is(err, store.ErrCorrupt) {
					return storeErr(st.Dir(), err)
				}
				return usageErr("exporting run %s: %v (no archive was written)", r.ID, err)
			}
			if err := tmp.Close(); err != nil {
				return usageErr("%v", err)
			}
			if err := os.Rename(tmp.Name(), output); err != nil {
				return usageErr("%v", err)
			}
			fi, err := os.Stat(output)
			if err != nil {
				return usageErr("%v", err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), struct {
					Run   string `json:"run"`
					File  string `json:"file"`
					Bytes int64  `json:"bytes"`
				}{r.ID, output, fi.Size()})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Exported run %s to %s (%d bytes).\n", r.ID, output, fi.Size())
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "archive file to write")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// importResult is what happened to one archive given to import.
type importResult struct {
	File   string `json:"file"`
	Run    string `json:"run,omitempty"`
	Status string `json:"status"` // imported, already_in_store, failed
	Error  string `json:"error,omitempty"`
}

func newImportCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import run archives (from export) into the store; an archive already imported is skipped",
		Long: `Import adds each archive's run to the store. Every archive is checked whole
before anything of it is written, so a damaged or hostile archive writes
nothing; the others are imported all the same. Exit 2 if any archive
failed (each is named, with why), 0 otherwise.`,
		Args: atLeast(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd, false)
			if err != nil {
				return err
			}
			defer st.Close()
			out := cmd.OutOrStdout()
			var results []importResult
			failed := 0
			for _, a := range args {
				res := importOne(st, a)
				results = append(results, res)
				switch {
				case res.Status == "failed":
					failed++
					fmt.Fprintf(cmd.ErrOrStderr(), "landslide: %s: not imported: %s\n", a, res.Error)
				case asJSON:
				case res.Status == "already_in_store":
					fmt.Fprintf(out, "%s: run %s is already in the store.\n", a, res.Run)
				default:
					fmt.Fprintf(out, "%s: imported run %s.\n", a, res.Run)
				}
			}
			if asJSON {
				if err := writeJSON(out, struct {
					Archives []importResult `json:"archives"`
					Failed   int            `json:"failed"`
				}{results, failed}); err != nil {
					return err
				}
			}
			if failed > 0 {
				rest := ""
				if failed < len(args) {
					rest = "; the others were imported"
				}
				return usageErr("%d of %d archives not imported (nothing of them was written%s)", failed, len(args), rest)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

// importOne imports one archive file. A store failure is reported as
// the archive's failure: Import writes nothing of an archive unless all
// of it is written.
func importOne(st *store.Store, file string) importResult {
	res := importResult{File: file}
	fh, err := os.Open(file)
	if err != nil {
		res.Status, res.Error = "failed", err.Error()
		return res
	}
	defer fh.Close()
	id, err := st.Import(fh)
	res.Run = id
	switch {
	case err == nil:
		res.Status = "imported"
	case errors.Is(err, store.ErrExists):
		res.Status = "already_in_store"
	case errors.Is(err, store.ErrArchive):
		res.Status, res.Error = "failed", "invalid archive: "+err.Error()
	default:
		res.Status, res.Error = "failed", err.Error()
	}
	return res
}

// statusLine is a stored run's status and message, the status said once
// where the message begins with it ("verified: 25 interleavings").
func statusLine(status, msg string) string {
	if strings.HasPrefix(msg, status+":") {
		return msg
	}
	return status + ": " + msg
}
