package cli

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"landslide/check"
	"landslide/sdk"
	"landslide/svcomp"
)

// SVCOMPJSON is suite --svcomp's --json document.
type SVCOMPJSON struct {
	Dir     string      `json:"dir"`
	Budget  float64     `json:"budget_seconds"`
	Workers int         `json:"workers"`
	Build   string      `json:"build"`
	Tasks   []SVCOMPRow `json:"tasks"`
	Totals  SVCOMPTotal `json:"totals"`
	Elapsed float64     `json:"elapsed_seconds"`
}

// SVCOMPRow is one task of suite --svcomp.
type SVCOMPRow struct {
	Task     string `json:"task"`
	Property string `json:"property"`
	// Expected is the task's expected verdict ("" where it states none);
	// Verdict Landslide's: true, false or unknown.
	Expected string `json:"expected"`
	Verdict  string `json:"verdict"`
	Score    int    `json:"score"`
	// Reason says why the verdict is unknown, or names the violation.
	Reason        string  `json:"reason,omitempty"`
	Interleavings int     `json:"interleavings"`
	Elapsed       float64 `json:"elapsed_seconds"`
}

// SVCOMPTotal sums a suite --svcomp run.
type SVCOMPTotal struct {
	Tasks        int `json:"tasks"`
	CorrectTrue  int `json:"correct_true"`
	CorrectFalse int `json:"correct_false"`
	WrongTrue    int `json:"wrong_true"`
	WrongFalse   int `json:"wrong_false"`
	Unknown      int `json:"unknown"`
	Score        int `json:"score"`
	// Answered is the share of tasks with a definite verdict.
	Answered float64 `json:"answered"`
}

func (t *SVCOMPTotal) add(r SVCOMPRow) {
	t.Tasks++
	t.Score += r.Score
	exp, got := svcomp.Verdict(r.Expected), svcomp.Verdict(r.Verdict)
	switch {
	case got == svcomp.Unknown:
		t.Unknown++
	case svcomp.Correct(exp, got) && got == svcomp.True:
		t.CorrectTrue++
	case svcomp.Correct(exp, got):
		t.CorrectFalse++
	case svcomp.Wrong(exp, got) && got == svcomp.True:
		t.WrongTrue++
	case svcomp.Wrong(exp, got):
		t.WrongFalse++
	}
	if t.Tasks > 0 {
		t.Answered = float64(t.Tasks-t.Unknown) / float64(t.Tasks)
	}
}

// svcompHeader is the CSV's first row.
var svcompHeader = []string{"task", "property", "expected", "verdict", "score", "interleavings", "seconds", "reason"}

func (r SVCOMPRow) csv() []string {
	return []string{r.Task, r.Property, r.Expected, r.Verdict, strconv.Itoa(r.Score), strconv.Itoa(r.Interleavings),
		strconv.FormatFloat(r.Elapsed, 'f', 2, 64), r.Reason}
}

// readSVCOMPCSV reads the rows of an earlier run's CSV (--csv), by task:
// a rerun with the same file skips them (resume). A file that does not
// exist is no rows; one that is not such a CSV is an error.
func readSVCOMPCSV(path string) (map[string]SVCOMPRow, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	if strings.Join(recs[0], ",") != strings.Join(svcompHeader, ",") {
		return nil, fmt.Errorf("%s: not a suite --svcomp CSV (its header is %q)", path, strings.Join(recs[0], ","))
	}
	out := map[string]SVCOMPRow{}
	for i, r := range recs[1:] {
		if len(r) != len(svcompHeader) {
			return nil, fmt.Errorf("%s: row %d has %d fields, want %d", path, i+2, len(r), len(svcompHeader))
		}
		row := SVCOMPRow{Task: r[0], Property: r[1], Expected: r[2], Verdict: r[3], Reason: r[7]}
		var e1, e2, e3 error
		row.Score, e1 = strconv.Atoi(r[4])
		row.Interleavings, e2 = strconv.Atoi(r[5])
		row.Elapsed, e3 = strconv.ParseFloat(r[6], 64)
		switch v := svcomp.Verdict(row.Verdict); {
		case e1 != nil || e2 != nil || e3 != nil:
			return nil, fmt.Errorf("%s: row %d: a number field is not a number", path, i+2)
		case row.Interleavings < 0 || !(row.Elapsed >= 0) || math.IsInf(row.Elapsed, 0):
			return nil, fmt.Errorf("%s: row %d: interleavings %s and seconds %s: want numbers of at least 0", path, i+2, r[5], r[6])
		case v != svcomp.True && v != svcomp.False && v != svcomp.Unknown:
			return nil, fmt.Errorf("%s: row %d: verdict %q", path, i+2, row.Verdict)
		case row.Score != svcomp.Score(svcomp.Verdict(row.Expected), v):
			return nil, fmt.Errorf("%s: row %d: score %d does not match verdict %s (expected %s)", path, i+2, row.Score, v, row.Expected)
		}
		out[row.Task] = row
	}
	return out, nil
}

// runSVCOMP is suite --svcomp: every task (.yml) under dir.
func runSVCOMP(cmd *cobra.Command, dir string, o suiteOptions) error {
	tasks, err := svcomp.Find(dir)
	if err != nil {
		return usageErr("suite --svcomp: %v", err)
	}
	if len(tasks) == 0 {
		return usageErr("suite --svcomp: %s holds no task file (.yml)", dir)
	}
	var done map[string]SVCOMPRow
	if o.csv != "" {
		if done, err = readSVCOMPCSV(o.csv); err != nil {
			return usageErr("suite --svcomp: --csv: %v", err)
		}
	}
	out := o.keep
	if out == "" {
		if out, err = os.MkdirTemp("", "landslide-svcomp-"); err != nil {
			return err
		}
		defer os.RemoveAll(out)
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return usageErr("suite: --keep: %v", err)
	}
	var csvw *csv.Writer
	if o.csv != "" {
		f, err := os.OpenFile(o.csv, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return usageErr("suite --svcomp: --csv: %v", err)
		}
		defer f.Close()
		csvw = csv.NewWriter(f)
		if len(done) == 0 {
			if st, err := f.Stat(); err == nil && st.Size() == 0 {
				csvw.Write(svcompHeader)
				csvw.Flush()
			}
		}
	}
	workers := max(o.workers, 1)
	doc := SVCOMPJSON{Dir: dir, Budget: o.budget.Seconds(), Workers: workers}
	prog, lib := sdk.Options{CFlags: o.cflags}.OptLevels()
	doc.Build = buildNote(prog, lib)
	w := cmd.OutOrStdout()
	start := time.Now()
	if !o.asJSON {
		fmt.Fprintf(w, "%d tasks in %s: SV-COMP conventions, every shared access a PP, %s each, %d at a time\neach %s\n", len(tasks), dir, o.budget, workers, doc.Build)
		if len(done) > 0 {
			fmt.Fprintf(w, "%d tasks already in %s: not run again\n", len(done), o.csv)
		}
	}
	rows := make([]SVCOMPRow, len(tasks))
	ready := make([]chan struct{}, len(tasks))
	for i := range ready {
		ready[i] = make(chan struct{})
	}
	ctx := cmd.Context()
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t := tasks[i]
				if r, ok := done[t.Name]; ok {
					rows[i] = r
				} else {
					rows[i] = svcompTask(ctx, t, filepath.Join(out, strconv.Itoa(i)+".elf"), o)
				}
				close(ready[i])
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range tasks {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	interrupted := false
	for i := range tasks {
		select {
		case <-ready[i]:
		case <-ctx.Done():
			interrupted = true
		}
		if interrupted {
			break
		}
		r := rows[i]
		doc.Tasks = append(doc.Tasks, r)
		doc.Totals.add(r)
		if _, old := done[r.Task]; !old && csvw != nil {
			csvw.Write(r.csv())
			csvw.Flush()
		}
		if !o.asJSON {
			printSVCOMPRow(w, r)
		}
	}
	wg.Wait()
	doc.Elapsed = time.Since(start).Seconds()
	if csvw != nil {
		if err := csvw.Error(); err != nil {
			return fmt.Errorf("suite --svcomp: --csv: %w", err)
		}
	}
	if o.asJSON {
		if err := writeJSON(w, doc); err != nil {
			return err
		}
	} else {
		t := doc.Totals
		fmt.Fprintf(w, "%d tasks: %d correct true, %d correct false, %d wrong true, %d wrong false, %d unknown (%.1f%% answered); score %d; %.1fs\n",
			t.Tasks, t.CorrectTrue, t.CorrectFalse, t.WrongTrue, t.WrongFalse, t.Unknown, 100*t.Answered, t.Score, doc.Elapsed)
	}
	switch {
	case interrupted:
		return &exitError{code: ExitBudget, msg: fmt.Sprintf("suite --svcomp: interrupted after %d of %d tasks (rerun with the same --csv to go on)", len(doc.Tasks), len(tasks))}
	case doc.Totals.WrongTrue+doc.Totals.WrongFalse > 0:
		return &exitError{code: ExitBug, msg: fmt.Sprintf("suite --svcomp: %d verdicts disagree with the tasks' expected ones", doc.Totals.WrongTrue+doc.Totals.WrongFalse)}
	}
	return nil
}

func printSVCOMPRow(w io.Writer, r SVCOMPRow) {
	exp := r.Expected
	if exp == "" {
		exp = "-"
	}
	mark := ""
	if svcomp.Wrong(svcomp.Verdict(r.Expected), svcomp.Verdict(r.Verdict)) {
		mark = "  WRONG"
	}
	line := fmt.Sprintf("%-52s %-6s %-8s %4d %8d interleavings %7.2fs%s", r.Task, exp, r.Verdict, r.Score, r.Interleavings, r.Elapsed, mark)
	if r.Reason != "" {
		line += "  " + r.Reason
	}
	fmt.Fprintln(w, line)
}

// svcompHuntShare: suite --svcomp hunts bugs with context-bounded DPOR
// for 1/svcompHuntShare of each task's budget first.
const svcompHuntShare = 4

// svcompTask checks one task's unreach-call property.
func svcompTask(ctx context.Context, t *svcomp.Task, elf string, o suiteOptions) (r SVCOMPRow) {
	t0 := time.Now()
	r = SVCOMPRow{Task: t.Name, Property: svcomp.UnreachCall, Verdict: string(svcomp.Unknown)}
	defer func() {
		r.Score = svcomp.Score(svcomp.Verdict(r.Expected), svcomp.Verdict(r.Verdict))
		r.Elapsed = time.Since(t0).Seconds()
	}()
	hasProp := false
	for _, p := range t.Properties {
		hasProp = hasProp || p.Name == svcomp.UnreachCall
	}
	if !hasProp {
		if len(t.Properties) > 0 {
			r.Property, r.Expected = t.Properties[0].Name, string(t.Properties[0].Expected)
		}
		r.Reason = fmt.Sprintf("property %s is not checked: Landslide checks %s", r.Property, svcomp.UnreachCall)
		return r
	}
	r.Expected = string(t.Expected(svcomp.UnreachCall))
	if t.Language != "" && t.Language != "C" {
		r.Reason = "language " + t.Language + ": Landslide's SV-COMP mode reads C"
		return r
	}
	src, err := os.ReadFile(t.Input)
	if err != nil {
		r.Reason = "input: " + err.Error()
		return r
	}
	if t.DataModel != "LP64" {
		if word, where := svcomp.DataModelRisk(src); word != "" {
			dm := t.DataModel
			if dm == "" {
				dm = "ILP32 (not stated: the category's)"
			}
			r.Reason = fmt.Sprintf("data model %s, and %s uses %s: Landslide's machine is LP64", dm, where, word)
			return r
		}
	}
	abs, err := filepath.Abs(t.Input)
	if err == nil {
		var absOut string
		if absOut, err = filepath.Abs(elf); err == nil {
			err = sdk.Build(sdk.Options{Sources: []string{abs}, Output: absOut, Posix: true, CFlags: o.cflags})
		}
	}
	if err != nil {
		r.Reason = "build error: " + firstError(err.Error())
		return r
	}
	image, err := os.ReadFile(elf)
	if err != nil {
		r.Reason = err.Error()
		return r
	}
	pps, err := check.ResolvePPs(image, check.PPRequest{EveryAccess: true, Args: []string{elf}, MaxThreads: o.maxThreads, MaxMemory: o.maxMemory})
	if err != nil {
		r.Reason = err.Error()
		return r
	}
	// Two phases: context-bounded DPOR (0, 1, 2, ... preemptions: bugs
	// that need few preemptions first; past executions that reach a
	// checker limit) for a quarter of the budget, whose bug is the
	// verdict; then the strategy (--strategy) from the start, for the
	// rest, whose result is. Only the second phase's result can be
	// "true".
	spec := check.Spec{Program: elf, Kernel: pps.Kernel}
	spec.Kernel.SVCOMP = true
	hunt := spec
	hunt.Strategy, hunt.Budget = "cbdpor", o.budget/svcompHuntShare
	cfg := check.Config{Spec: hunt, Image: image}
	cfg.PastLimits = true // an execution past the thread limit is no reason to stop hunting
	res, err := check.Explore(ctx, cfg, check.Recording{})
	if err != nil {
		r.Reason = err.Error()
		return r
	}
	if v, why := check.SVCOMPVerdict(res); v == svcomp.False {
		r.Interleavings = res.Interleavings
		r.Verdict, r.Reason = string(v), why
		return r
	}
	hunted := res.Interleavings
	spec.Strategy = o.strategy
	spec.Fallback = o.strategy == "optimal"
	spec.Budget = max(o.budget-time.Since(t0), time.Second)
	res, err = check.Explore(ctx, check.Config{Spec: spec, Image: image}, check.Recording{})
	if err != nil {
		r.Reason = err.Error()
		return r
	}
	res.Interleavings += hunted
	r.Interleavings = res.Interleavings
	v, why := check.SVCOMPVerdict(res)
	r.Verdict, r.Reason = string(v), why
	return r
}
