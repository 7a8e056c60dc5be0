package main

import "testing"

// The peers' summaries as GenMC 0.10.3 and Nidhugg 0.4 (0aea4d23) print
// them for dekker(2) (BENCHMARKS.md, "Side by side with GenMC and
// Nidhugg"), and Nidhugg's with sleep-set-blocked traces.
func TestParsePeers(t *testing.T) {
	genmc := `GenMC v0.10.3 (LLVM 14.0.6)
*** Verification complete.
No errors were detected.
Number of complete executions explored: 71
Number of blocked executions seen: 111
Total wall-clock time: 0.06s
`
	nidhugg := `WARNING: something
Trace count: 71
Await-blocked trace count: 111
No errors were detected.
Total wall-clock time: 0.56 s
`
	sleep := "Trace count: 10 (also 3 sleepset blocked)\nAssume-blocked trace count: 2\nNo errors were detected.\nTotal wall-clock time: 1.5 s\n"
	for _, c := range []struct {
		name  string
		parse func([]byte) (measure, error)
		out   string
		want  measure
	}{
		{"genmc", parseGenMC, genmc, measure{executions: 182, traces: 71, seconds: 0.06}},
		{"nidhugg", parseNidhugg, nidhugg, measure{executions: 182, traces: 71, seconds: 0.56}},
		{"nidhugg sleep", parseNidhugg, sleep, measure{executions: 15, traces: 10, seconds: 1.5}},
	} {
		got, err := c.parse([]byte(c.out))
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	if _, err := parseGenMC([]byte("Error: Non-atomic race!\nNumber of complete executions explored: 0\nTotal wall-clock time: 0.05s\n")); err == nil {
		t.Error("genmc: an error run parsed as a measure")
	}
}

func TestParseRows(t *testing.T) {
	rows, err := parseRows("lastzero=10,12 readers=13", "")
	if err != nil || len(rows) != 3 || rows[1] != (row{"lastzero", 12}) || rows[2] != (row{"readers", 13}) {
		t.Fatalf("got %v, %v", rows, err)
	}
	if rows, err := parseRows(defaultRows, "dekker"); err != nil || len(rows) != 1 || rows[0] != (row{"dekker", 3}) {
		t.Errorf("-families dekker: got %v, %v", rows, err)
	}
	for _, bad := range []string{"lastzero", "nosuch=3", "lastzero=x", "lastzero=0"} {
		if _, err := parseRows(bad, ""); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
