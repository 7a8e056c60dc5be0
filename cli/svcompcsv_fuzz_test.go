package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadSVCOMPCSV: the CSV a suite --svcomp rerun resumes from (--csv)
// is a file on disk, the user's or a damaged one: any content gives rows
// or an error naming the file, never a panic, and every row it accepts
// is one the run could have written (a known verdict scored as SV-COMP
// scores it, counts and times that are numbers a report can print: the
// --json document must encode).
func FuzzReadSVCOMPCSV(f *testing.F) {
	head := strings.Join(svcompHeader, ",") + "\n"
	for _, s := range []string{
		"",
		head,
		head + "pthread/a,unreach-call,true,true,2,10,1.50,\n",
		head + "pthread/b,unreach-call,false,unknown,0,3,60.00,the budget ran out after 3 interleavings\n",
		head + "x,unreach-call,true,false,-16,1,0.10,\"a, quoted\nreason\"\n",
		head + "x,unreach-call,true,true,2,1,NaN,\n",
		head + "x,unreach-call,true,true,2,-1,1,\n",
		"task,property\n",
		head + "short,row\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "rows.csv")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := readSVCOMPCSV(p)
		if err != nil {
			if !strings.HasPrefix(err.Error(), p+": ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for task, r := range rows {
			if r.Task != task {
				t.Fatalf("row of %q filed under %q", r.Task, task)
			}
			if r.Interleavings < 0 || r.Elapsed < 0 || math.IsNaN(r.Elapsed) || math.IsInf(r.Elapsed, 0) {
				t.Fatalf("row %+v: counts and times must be non-negative numbers", r)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Fatalf("row %+v does not encode: %v", r, err)
			}
		}
	})
}
