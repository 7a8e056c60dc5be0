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
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"landslide/store"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func stamp(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05")
}

type storedRunJSON struct {
	ID       string    `json:"id"`
	Created  string    `json:"created"`
	Updated  string    `json:"updated"`
	Command  string    `json:"command"`
	Program  string    `json:"program"`
	Binary   string    `json:"binary"`
	Args     []string  `json:"args"`
	Status   string    `json:"status"`
	Message  string    `json:"message"`
	Env      store.Env `json:"env"`
	Jobs     []jobJSON `json:"jobs,omitempty"`
	Bugs     []bugJSON `json:"bugs,omitempty"`
	RaceCnt  int       `json:"race_candidates"`
	Branches int       `json:"interleavings"`
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
}

type bugJSON struct {
	Run       string   `json:"run"`
	Job       int      `json:"job"`
	Trace     int      `json:"trace"`
	Kind      string   `json:"kind"`
	Message   string   `json:"message"`
	Signature string   `json:"signature"`
	Stack     []string `json:"stack"`
}

func runDoc(st *store.Store, r *store.Run, full bool) (storedRunJSON, error) {
	d := storedRunJSON{ID: r.ID, Created: stamp(r.Created), Updated: stamp(r.Updated), Command: r.Command, Program: r.Program,
		Binary: r.Binary, Args: r.Args, Status: string(r.Status), Message: r.Message, Env: r.Env}
	jobs, err := st.Jobs(r.ID)
	if err != nil {
		return d, err
	}
	for _, j := range jobs {
		d.Branches += j.Executed
		if full {
			d.Jobs = append(d.Jobs, jobJSON{ID: j.ID, PPSet: j.PPSet, Status: string(j.Status), Interleavings: j.Interleavings,
				Executed: j.Executed, Complete: j.Complete, EstSize: j.EstSize, EstProportion: j.EstProportion,
				ElapsedSec: time.Duration(j.Elapsed).Seconds(), Commits: j.Commits})
		}
	}
	if full {
		bugs, err := st.Bugs(r.ID)
		if err != nil {
			return d, err
		}
		for _, b := range bugs {
			d.Bugs = append(d.Bugs, bugDoc(b))
		}
		for _, j := range jobs {
			rr, err := st.Races(r.ID, j.ID)
			if err != nil {
				return d, err
			}
			d.RaceCnt += len(rr)
		}
	}
	return d, nil
}

func bugDoc(b *store.BugRecord) bugJSON {
	return bugJSON{Run: b.Run, Job: b.Job, Trace: b.Trace, Kind: b.Kind.String(), Message: b.Message, Signature: b.Signature, Stack: b.Funcs}
}

func newLsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the runs in the store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd, true)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.Runs()
			if err != nil {
				return storeErr(st.Dir(), err)
			}
			docs := []storedRunJSON{}
			for _, r := range runs {
				d, err := runDoc(st, r, false)
				if err != nil {
					return storeErr(st.Dir(), err)
				}
				docs = append(docs, d)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, docs)
			}
			if len(docs) == 0 {
				fmt.Fprintf(out, "No runs in %s.\n", st.Dir())
				return nil
			}
			tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tCREATED\tCOMMAND\tPROGRAM\tSTATUS\tINTERLEAVINGS\tRESULT")
			for _, d := range docs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", d.ID, d.Created, d.Command, d.Program, d.Status, d.Branches, d.Message)
			}
			return tw.Flush()
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
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, r, err := openRun(cmd, args[0], true)
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
			fmt.Fprintf(out, "Run %s: %s %s %s\n", d.ID, d.Command, d.Program, strings.Join(d.Args, " "))
			fmt.Fprintf(out, "  created %s, updated %s\n", d.Created, d.Updated)
			fmt.Fprintf(out, "  binary  sha256 %s\n", d.Binary)
			fmt.Fprintf(out, "  machine %s/%s, %d CPUs, %s, landslide %s, host %s\n", d.Env.OS, d.Env.Arch, d.Env.CPUs, d.Env.GoVersion, d.Env.Version, d.Env.Host)
			fmt.Fprintf(out, "  status  %s: %s\n", d.Status, d.Message)
			for _, j := range d.Jobs {
				fmt.Fprintf(out, "Job %d {%s}: %s, %d interleavings (%d run), estimated %.1f%% of about %.0f, %s, %d commits\n",
					j.ID, strings.Join(j.PPSet, ", "), j.Status, j.Interleavings, j.Executed, 100*j.EstProportion, j.EstSize,
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
			var bugs []*store.BugRecord
			if len(args) == 0 {
				if bugs, err = st.Bugs(""); err != nil {
					return storeErr(st.Dir(), err)
				}
			}
			for _, a := range args {
				r, err := st.Run(a)
				if err != nil {
					return storeErr(st.Dir(), err)
				}
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
				Stack     []string  `json:"stack"`
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
	cmd := &cobra.Command{
		Use:   "export RUN -o FILE",
		Short: "Write a run to a single-file archive (binary, options, results, bug traces, races)",
		Args:  cobra.ExactArgs(1),
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
				return usageErr("exporting run %s: %v", r.ID, err)
			}
			if err := tmp.Close(); err != nil {
				return usageErr("%v", err)
			}
			if err := os.Rename(tmp.Name(), output); err != nil {
				return usageErr("%v", err)
			}
			fi, _ := os.Stat(output)
			fmt.Fprintf(cmd.OutOrStdout(), "Exported run %s to %s (%d bytes).\n", r.ID, output, fi.Size())
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "archive file to write")
	return cmd
}

func newImportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE...",
		Short: "Import run archives (from export) into the store; an archive already imported is skipped",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd, false)
			if err != nil {
				return err
			}
			defer st.Close()
			for _, a := range args {
				fh, err := os.Open(a)
				if err != nil {
					return usageErr("%v", err)
				}
				id, err := st.Import(fh)
				fh.Close()
				existed := errors.Is(err, store.ErrExists)
				if err != nil && !existed {
					return usageErr("importing %s: %v (the store is unchanged)", a, err)
				}
				if existed {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: run %s is already in the store.\n", a, id)
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: imported run %s.\n", a, id)
				}
			}
			return nil
		},
	}
}
