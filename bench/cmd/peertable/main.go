// Command peertable measures Landslide side by side with GenMC and Nidhugg
// (issue 40, "Benchmarks that hold us to it"): the benchmark families of
// the DPOR literature as our own C sources (fixtures/src/posix/, each size
// N its argv[1]), explored by
//
//	landslide explore X.elf --every-access --strategy optimal|dpor --no-store --quiet --json -- N
//
// under GOMAXPROCS=1 (the peers are single-threaded: the Go collector must
// not borrow the second core), and, when they are found, by
//
//	genmc --sc --disable-estimation --disable-race-detection -- -I SHIM -DN=N X_peer.c
//	nidhuggc -I SHIM -DN=N -- --sc --optimal X_peer.c
//
// on the same source in the same run (GenMC without its race detection:
// the families' plain volatile accesses are racy by design, which GenMC
// would report as an error at the first race; Landslide and Nidhugg
// explore them under sequential consistency). The peers take N at compile time:
// X_peer.c is a generated wrapper that #includes the fixture's source
// unchanged with its main renamed, and calls it with argv = {"peertable",
// "N"}, so the program runs exactly as it does under Landslide with N as
// argv[1] (its atoi is a small one of the wrapper's, which the peers'
// libraries need not provide; SHIM holds a verifier.h declaring the
// SV-COMP calls as each peer's own headers do).
//
// Each family and size runs -rounds times; within a round every tool runs
// once, the order rotated from round to round, and the table gives the
// medians of the executions per second and of the per-round ratios
// (paired by round, so that a drift in the machine's speed weighs on both
// sides). Executions are complete plus blocked ones (assume- and
// sleep-set-blocked); the rate divides them by the tool's own reported
// time (Landslide's elapsed_seconds, the peers' "Total wall-clock time").
//
//	go run ./bench/cmd/peertable > /tmp/peers.md
//	go run ./bench/cmd/peertable -rows 'lastzero=10,12 readers=13' -rounds 5 -genmc ~/genmc/genmc -nidhugg ~/nidhugg/src/nidhuggc
//
// A long run (minutes per row): it is a command, never part of go test.
// The Markdown goes to stdout, progress to stderr.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"landslide/fixtures"
)

// defaultRows are issue 40's table: family and sizes.
const defaultRows = "lastzero=10,12 readers=13 indexer=14 fib_bench=4 szymanski=2 peterson=3 dekker=3"

// row is one family at one size.
type row struct {
	family string
	n      int
}

func (r row) String() string { return fmt.Sprintf("%s (%d)", r.family, r.n) }

// measure is one run of one tool.
type measure struct {
	executions int64   // complete + blocked
	traces     int64   // complete executions (distinct traces)
	seconds    float64 // the tool's own time for the exploration
	wall       float64 // the process's wall time, measured here
}

// tool runs one program at one size.
type tool struct {
	name string
	run  func(ctx context.Context, r row) (measure, error)
}

func main() {
	rowsFlag := flag.String("rows", defaultRows, "families and sizes: space-separated FAMILY=N[,N...] (fixtures/src/posix/FAMILY.c)")
	families := flag.String("families", "", "comma-separated families: only these rows of -rows")
	rounds := flag.Int("rounds", 3, "rounds per family and size (the tools alternate within each)")
	lsPath := flag.String("landslide", "", "landslide binary (default: go build ./cmd/landslide into a temporary directory)")
	genmcPath := flag.String("genmc", "", `genmc binary (default: "genmc" on the PATH; "off" skips it)`)
	nidhuggPath := flag.String("nidhugg", "", `nidhuggc (default: "nidhuggc" on the PATH, or nidhuggc.py next to a "nidhugg" on it; "off" skips it)`)
	strategies := flag.String("strategies", "optimal,dpor", "Landslide strategies, comma-separated (the ratios use the first)")
	timeout := flag.Duration("timeout", 10*time.Minute, "wall-time limit of each run (a run past it shows as a timeout)")
	work := flag.String("work", "", "directory for the generated sources (default: a temporary one, removed at the end)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: peertable [flags] > table.md\n\n"+
			"Runs the DPOR benchmark families (fixtures/src/posix/) under Landslide (optimal and dpor,\n"+
			"GOMAXPROCS=1) and, when found, GenMC and Nidhugg on the same sources, alternating the tools\n"+
			"round by round; prints executions, traces, executions per second (medians) and the paired\n"+
			"ratios as Markdown.\n\nflags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 || *rounds < 1 {
		flag.Usage()
		os.Exit(2)
	}
	rows, err := parseRows(*rowsFlag, *families)
	if err != nil {
		fatal(err)
	}

	dir := *work
	if dir == "" {
		if dir, err = os.MkdirTemp("", "peertable"); err != nil {
			fatal(err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		fatal(err)
	}
	if *lsPath == "" {
		*lsPath = filepath.Join(dir, "landslide")
		progress("building %s", *lsPath)
		cmd := exec.Command("go", "build", "-o", *lsPath, "./cmd/landslide")
		cmd.Dir = fixtures.Root()
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fatal(fmt.Errorf("go build ./cmd/landslide: %v", err))
		}
	}

	var tools []tool
	var strats []string
	for _, s := range strings.Split(*strategies, ",") {
		if s = strings.TrimSpace(s); s != "" {
			strats = append(strats, s)
			tools = append(tools, landslideTool(*lsPath, s))
		}
	}
	if len(strats) == 0 {
		fatal(errors.New("-strategies: none"))
	}
	var missing []string
	genmc := findPeer(*genmcPath, "genmc", "")
	if genmc != "" {
		tools = append(tools, genmcTool(genmc, dir))
	} else {
		missing = append(missing, "GenMC")
	}
	nidhugg := findPeer(*nidhuggPath, "nidhuggc", "nidhugg")
	if nidhugg != "" {
		tools = append(tools, nidhuggTool(nidhugg, dir))
	} else {
		missing = append(missing, "Nidhugg")
	}
	for _, m := range missing {
		progress("%s not found (flag or PATH): its columns are left out", m)
	}
	start := time.Now()
	load0 := loadavg()

	// results[row][tool] holds one measure per round (nil where it failed).
	results := make([][][]*measure, len(rows))
	notes := map[string]string{} // "row/tool" → why it failed
	for i, r := range rows {
		results[i] = make([][]*measure, len(tools))
		for round := 0; round < *rounds; round++ {
			for k := range tools {
				t := tools[(k+round)%len(tools)]
				ti := (k + round) % len(tools)
				key := r.String() + "/" + t.name
				if _, failed := notes[key]; failed {
					continue // a program that fails once fails every round
				}
				ctx, cancel := context.WithTimeout(context.Background(), *timeout)
				m, err := t.run(ctx, r)
				timedOut := ctx.Err() != nil
				cancel()
				if err != nil {
					if timedOut {
						notes[key] = fmt.Sprintf("timeout (%v)", *timeout)
					} else {
						notes[key] = "error"
					}
					progress("%s, round %d, %s: %v", r, round+1, t.name, err)
					continue
				}
				results[i][ti] = append(results[i][ti], &m)
				progress("%s, round %d, %s: %d executions, %d traces, %.3f s (%.0f/s; process %.2f s)",
					r, round+1, t.name, m.executions, m.traces, m.seconds, rate(m), m.wall)
			}
		}
	}

	// The tables.
	fmt.Printf("Executions per second (median of %d rounds; executions = complete + blocked, over the tool's own time):\n\n", *rounds)
	head := "| program (N) |"
	sep := "|---|"
	for _, t := range tools {
		head += " " + t.name + " |"
		sep += "---:|"
	}
	type ratio struct{ num, den int }
	var ratios []ratio
	for pi := len(strats); pi < len(tools); pi++ {
		ratios = append(ratios, ratio{0, pi})
	}
	if len(strats) > 1 {
		for pi := len(strats); pi < len(tools); pi++ {
			ratios = append(ratios, ratio{1, pi})
		}
	}
	for _, q := range ratios {
		head += fmt.Sprintf(" %s ÷ %s |", short(tools[q.num].name), short(tools[q.den].name))
		sep += "---:|"
	}
	fmt.Println(head)
	fmt.Println(sep)
	for i, r := range rows {
		line := "| " + r.String() + " |"
		for ti, t := range tools {
			line += " " + rateCell(results[i][ti], notes[r.String()+"/"+t.name]) + " |"
		}
		for _, q := range ratios {
			line += " " + ratioCell(results[i][q.num], results[i][q.den]) + " |"
		}
		fmt.Println(line)
	}

	fmt.Printf("\nExecutions and traces (complete executions; the same in every round unless a range is shown):\n\n")
	head, sep = "| program (N) |", "|---|"
	for _, t := range tools {
		head += fmt.Sprintf(" %s: executions | traces |", t.name)
		sep += "---:|---:|"
	}
	fmt.Println(head)
	fmt.Println(sep)
	for i, r := range rows {
		line := "| " + r.String() + " |"
		for ti := range tools {
			ms := results[i][ti]
			line += " " + countCell(ms, func(m *measure) int64 { return m.executions }) + " | " +
				countCell(ms, func(m *measure) int64 { return m.traces }) + " |"
		}
		fmt.Println(line)
	}

	fmt.Printf("\n%s; %s, %d cores; load average %s at the start, %s at the end; %s of wall time.",
		start.UTC().Format("2006-01-02 15:04 UTC"), cpuModel(), runtime.NumCPU(), load0, loadavg(),
		time.Since(start).Round(time.Second))
	if len(missing) > 0 {
		fmt.Printf(" Not found, so not run: %s.", strings.Join(missing, ", "))
	}
	fmt.Println()
}

// parseRows reads "fam=n,n fam=n", keeping the families in only (if set).
func parseRows(spec, only string) ([]row, error) {
	keep := map[string]bool{}
	for _, f := range strings.Split(only, ",") {
		if f = strings.TrimSpace(f); f != "" {
			keep[f] = true
		}
	}
	var rows []row
	for _, field := range strings.Fields(spec) {
		fam, ns, ok := strings.Cut(field, "=")
		if !ok || fam == "" {
			return nil, fmt.Errorf("-rows: %q is not FAMILY=N[,N...]", field)
		}
		if _, ok := fixtures.Lookup("posix/" + fam); !ok {
			return nil, fmt.Errorf("-rows: no fixture posix/%s", fam)
		}
		for _, s := range strings.Split(ns, ",") {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("-rows: %q: bad size %q", field, s)
			}
			if len(keep) == 0 || keep[fam] {
				rows = append(rows, row{fam, n})
			}
		}
	}
	if len(rows) == 0 {
		return nil, errors.New("no rows to run")
	}
	return rows, nil
}

// landslideTool explores the fixture's ELF under strategy, GOMAXPROCS=1.
func landslideTool(bin, strategy string) tool {
	return tool{name: "Landslide " + strategy, run: func(ctx context.Context, r row) (measure, error) {
		f, _ := fixtures.Lookup("posix/" + r.family)
		cmd := exec.CommandContext(ctx, bin, "explore", f.Path(), "--every-access", "--strategy", strategy,
			"--no-store", "--quiet", "--json", "--", strconv.Itoa(r.n))
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		out, wall, err := run(cmd)
		if err != nil {
			return measure{}, err
		}
		var res struct {
			Result   string  `json:"result"`
			Executed int64   `json:"executed"`
			Traces   int64   `json:"traces"`
			Complete bool    `json:"complete"`
			Elapsed  float64 `json:"elapsed_seconds"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return measure{}, fmt.Errorf("landslide's JSON: %v", err)
		}
		if !res.Complete {
			return measure{}, fmt.Errorf("incomplete exploration (%s)", res.Result)
		}
		return measure{executions: res.Executed, traces: res.Traces, seconds: res.Elapsed, wall: wall}, nil
	}}
}

// genmcTool runs GenMC under sequential consistency.
func genmcTool(bin, dir string) tool {
	shim := filepath.Join(dir, "genmc")
	return tool{name: "GenMC", run: func(ctx context.Context, r row) (measure, error) {
		// GenMC's own headers declare __VERIFIER_assume(bool).
		src, err := peerSource(dir, shim, r.family, "#include <genmc.h>\n")
		if err != nil {
			return measure{}, err
		}
		return runPeer(exec.CommandContext(ctx, bin, "--sc", "--disable-estimation", "--disable-race-detection", "--",
			"-I", shim, fmt.Sprintf("-DN=%d", r.n), src), parseGenMC)
	}}
}

// runPeer runs a peer and reads its summary with parse; the process's
// own wall time goes with it.
func runPeer(cmd *exec.Cmd, parse func([]byte) (measure, error)) (measure, error) {
	out, wall, err := run(cmd)
	if err != nil {
		return measure{}, err
	}
	m, err := parse(out)
	m.wall = wall
	return m, err
}

// parseGenMC reads GenMC's summary: complete executions, blocked ones and
// its wall-clock time, on a run with no error.
func parseGenMC(out []byte) (measure, error) {
	complete, ok1 := intAfter(out, `Number of complete executions explored:\s*(\d+)`)
	blocked, _ := intAfter(out, `Number of blocked executions seen:\s*(\d+)`)
	secs, ok2 := floatAfter(out, `Total wall-clock time:\s*([0-9.]+)\s*s`)
	if !ok1 || !ok2 || !bytes.Contains(out, []byte("No errors were detected")) {
		return measure{}, fmt.Errorf("unexpected GenMC output:\n%s", tail(out))
	}
	return measure{executions: complete + blocked, traces: complete, seconds: secs}, nil
}

// nidhuggTool runs Nidhugg's optimal DPOR under sequential consistency.
func nidhuggTool(bin, dir string) tool {
	shim := filepath.Join(dir, "nidhugg")
	return tool{name: "Nidhugg optimal", run: func(ctx context.Context, r row) (measure, error) {
		src, err := peerSource(dir, shim, r.family, "void __VERIFIER_assume(int);\n")
		if err != nil {
			return measure{}, err
		}
		return runPeer(exec.CommandContext(ctx, bin, "-I", shim, fmt.Sprintf("-DN=%d", r.n), "--",
			"--sc", "--optimal", src), parseNidhugg)
	}}
}

// parseNidhugg reads Nidhugg's summary: the trace count, the sleep-set-,
// assume- and await-blocked ones and its wall-clock time, on a run with
// no error.
func parseNidhugg(out []byte) (measure, error) {
	complete, ok1 := intAfter(out, `(?m)^Trace count:\s*(\d+)`)
	secs, ok2 := floatAfter(out, `Total wall-clock time:\s*([0-9.]+)\s*s`)
	if !ok1 || !ok2 || !bytes.Contains(out, []byte("No errors were detected")) {
		return measure{}, fmt.Errorf("unexpected Nidhugg output:\n%s", tail(out))
	}
	blocked := int64(0)
	for _, re := range []string{
		`(?m)^Trace count:\s*\d+\s*\(also\s*(\d+)\s*sleepset blocked`,
		`(?m)^Assume-blocked trace count:\s*(\d+)`,
		`(?m)^Await-blocked trace count:\s*(\d+)`,
	} {
		if b, ok := intAfter(out, re); ok {
			blocked += b
		}
	}
	return measure{executions: complete + blocked, traces: complete, seconds: secs}, nil
}

// peerSource writes dir/FAMILY_peer.c, the fixture's source with N from
// the command line (-DN=...) as its argv[1], and shim/verifier.h with the
// given declarations; it returns the wrapper's path.
func peerSource(dir, shim, family, verifier string) (string, error) {
	f, ok := fixtures.Lookup("posix/" + family)
	if !ok || len(f.Sources) != 1 {
		return "", fmt.Errorf("no one-source fixture posix/%s", family)
	}
	if err := os.MkdirAll(shim, 0o755); err != nil {
		return "", err
	}
	h := "/* peertable: the SV-COMP calls, as this peer declares them. */\n" +
		"#ifndef PEERTABLE_VERIFIER_H\n#define PEERTABLE_VERIFIER_H\n" + verifier + "#endif\n"
	if err := os.WriteFile(filepath.Join(shim, "verifier.h"), []byte(h), 0o644); err != nil {
		return "", err
	}
	orig := filepath.Join(fixtures.Root(), f.Sources[0])
	src := fmt.Sprintf(`/* peertable: %s, unchanged, run with argv[1] = N (-DN=...). */
#include <stdlib.h>
static int peertable_atoi(const char *s)
{
	int v = 0;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return v;
}
#define atoi peertable_atoi
#define main peertable_main
#include %q
#undef main
#undef atoi
#define PEERTABLE_STR_(x) #x
#define PEERTABLE_STR(x) PEERTABLE_STR_(x)
int main(void)
{
	static char arg0[] = "peertable", arg1[] = PEERTABLE_STR(N);
	static char *argv[3];
	argv[0] = arg0; /* one store each: no memcpy for the peers to model */
	argv[1] = arg1;
	return peertable_main(2, argv);
}
`, f.Sources[0], orig)
	path := filepath.Join(dir, family+"_peer.c")
	return path, os.WriteFile(path, []byte(src), 0o644)
}

// findPeer resolves a peer's binary: the flag's path, or name on the
// PATH, or (for Nidhugg's driver) nidhuggc.py beside alt on the PATH.
func findPeer(flagPath, name, alt string) string {
	switch flagPath {
	case "off":
		return ""
	case "":
	default:
		if p, err := exec.LookPath(flagPath); err == nil {
			return p
		}
		fatal(fmt.Errorf("%s: not an executable", flagPath))
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if alt != "" {
		if p, err := exec.LookPath(alt); err == nil {
			if py := filepath.Join(filepath.Dir(p), name+".py"); isExec(py) {
				return py
			}
		}
	}
	return ""
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// run runs cmd, returning its stdout and stderr together and its wall time.
func run(cmd *exec.Cmd) ([]byte, float64, error) {
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0).Seconds()
	if err != nil {
		return nil, wall, fmt.Errorf("%s: %v\n%s", filepath.Base(cmd.Path), err, tail(out.Bytes()))
	}
	return out.Bytes(), wall, nil
}

func intAfter(out []byte, re string) (int64, bool) {
	m := regexp.MustCompile(re).FindSubmatch(out)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseInt(string(m[1]), 10, 64)
	return v, err == nil
}

func floatAfter(out []byte, re string) (float64, bool) {
	m := regexp.MustCompile(re).FindSubmatch(out)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	return v, err == nil
}

func tail(out []byte) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}

func rate(m measure) float64 {
	if m.seconds <= 0 {
		return 0
	}
	return float64(m.executions) / m.seconds
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func rateCell(ms []*measure, note string) string {
	if len(ms) == 0 {
		if note == "" {
			note = "—"
		}
		return note
	}
	var rs []float64
	for _, m := range ms {
		rs = append(rs, rate(*m))
	}
	return commas(int64(median(rs) + 0.5))
}

// ratioCell is the median of the per-round ratios of num's rate to den's.
func ratioCell(num, den []*measure) string {
	var rs []float64
	for i := 0; i < len(num) && i < len(den); i++ {
		if d := rate(*den[i]); d > 0 {
			rs = append(rs, rate(*num[i])/d)
		}
	}
	if len(rs) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", median(rs))
}

func countCell(ms []*measure, f func(*measure) int64) string {
	if len(ms) == 0 {
		return "—"
	}
	lo, hi := f(ms[0]), f(ms[0])
	for _, m := range ms[1:] {
		lo, hi = min(lo, f(m)), max(hi, f(m))
	}
	if lo == hi {
		return commas(lo)
	}
	return commas(lo) + "–" + commas(hi)
}

// short names a tool in a ratio's heading.
func short(name string) string { return strings.TrimPrefix(name, "Landslide ") }

func commas(v int64) string {
	s := strconv.FormatInt(v, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "peertable: "+format+"\n", args...)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "peertable:", err)
	os.Exit(2)
}
