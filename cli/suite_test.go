package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSuite: suite builds and explores every C and C++ file of a
// directory: a program with a bug (misuse: a thread joined twice), a
// correct one (readers(2), the default size), one with opposite lock
// orders that deadlocks only in some interleavings, one that does not
// compile, a C++ one (peterson(1) with std::thread, its 310 traces), and
// a preprocessed .i (glibc_assert: its lost increment);
// the exit code is the bug's, and an empty directory is a usage error.
// One creates more threads than the default limit: "limit", not a bug;
// with --max-threads 2 the correct readers(2) is one too (exit 3).
func TestSuite(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a_misuse.c":    "../fixtures/src/posix/misuse.c",
		"b_readers.c":   "../fixtures/src/posix/readers.c",
		"d_locked.c":    "../fixtures/src/small/posix_locked.c",
		"c_deadlock.c":  "",
		"e_broken.c":    "",
		"f_many.c":      "",
		"g_peterson.cc": "../fixtures/src/cxx/peterson.cc",
		"h_glibc.i":     "../fixtures/src/posix/glibc_assert.c",
	} {
		var b []byte
		var err error
		switch {
		case src != "":
			b, err = os.ReadFile(src)
		case name == "c_deadlock.c":
			b = []byte(`#include <pthread.h>
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static void *ab(void *p) { pthread_mutex_lock(&a); pthread_mutex_lock(&b); pthread_mutex_unlock(&b); pthread_mutex_unlock(&a); return p; }
static void *ba(void *p) { pthread_mutex_lock(&b); pthread_mutex_lock(&a); pthread_mutex_unlock(&a); pthread_mutex_unlock(&b); return p; }
int main(void) { pthread_t t, u; pthread_create(&t, 0, ab, 0); pthread_create(&u, 0, ba, 0); pthread_join(t, 0); pthread_join(u, 0); return 0; }
`)
		case name == "f_many.c": // 300 threads alive at once: past the default limit (256)
			b = []byte(`#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *f(void *p) { pthread_mutex_lock(&m); pthread_mutex_unlock(&m); return p; }
int main(void) { static pthread_t t[300]; pthread_mutex_lock(&m); for (int i = 0; i < 300; i++) pthread_create(&t[i], 0, f, 0); pthread_mutex_unlock(&m); for (int i = 0; i < 300; i++) pthread_join(t[i], 0); return 0; }
`)
		default:
			b = []byte("int main(void) { return undeclared; }\n")
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runCLI("suite", dir, "--budget", "20s", "--json")
	if code != ExitBug {
		t.Fatalf("suite: exit %d, want %d\n%s\n%s", code, ExitBug, stdout, stderr)
	}
	var doc SuiteJSON
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ProgramOpt != "-O0" || doc.SDKOpt != "-O1" || !strings.Contains(doc.Build, "--cflag -O1") {
		t.Errorf("suite builds as cc does, and says it: program_opt %q, sdk_opt %q, build %q", doc.ProgramOpt, doc.SDKOpt, doc.Build)
	}
	want := map[string]string{"a_misuse.c": "bug", "b_readers.c": "verified", "c_deadlock.c": "bug", "d_locked.c": "verified", "e_broken.c": "build error", "f_many.c": "limit", "g_peterson.cc": "verified", "h_glibc.i": "bug"}
	if len(doc.Programs) != len(want) {
		t.Fatalf("%d programs: %+v", len(doc.Programs), doc.Programs)
	}
	for _, p := range doc.Programs {
		if p.Result != want[p.Source] {
			t.Errorf("%s: %s (%s), want %s", p.Source, p.Result, p.Message, want[p.Source])
		}
	}
	if p := doc.Programs[1]; p.Interleavings != 4 {
		t.Errorf("readers(2): %d interleavings, want its 4 traces", p.Interleavings)
	}
	if p := doc.Programs[2]; p.Message == "" || p.Message[:9] != "deadlock:" {
		t.Errorf("c_deadlock.c: %q, want a deadlock", p.Message)
	}
	if p := doc.Programs[6]; p.Interleavings != 310 {
		t.Errorf("peterson.cc(1): %d interleavings, want its 310 traces", p.Interleavings)
	}
	if p := doc.Programs[5]; !strings.Contains(p.Message, "thread limit: creating a thread would exceed 256 live threads (--max-threads raises it)") {
		t.Errorf("f_many.c: %q, want the thread limit", p.Message)
	}
	if code, _, stderr := runCLI("suite", t.TempDir()); code != ExitUsage {
		t.Errorf("empty directory: exit %d (%s)", code, stderr)
	}
	// --max-threads: readers(2) has 3 threads alive at once.
	one := t.TempDir()
	b, err := os.ReadFile("../fixtures/src/posix/readers.c")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(one, "readers.c"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI("suite", one, "--max-threads", "2")
	if code != ExitBudget || !strings.Contains(stdout, "readers.c") || !strings.Contains(stdout, " limit ") ||
		!strings.Contains(stdout, "exceed 2 live threads (--max-threads raises it)") || !strings.Contains(stdout, "0 bug, 0 verified, 0 budget, 1 limit") {
		t.Errorf("suite --max-threads 2: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestSuiteSVCOMP: suite --svcomp on SV-COMP-style tasks of our own
// (testdata/svcomp: .i files that declare what glibc's headers would, as
// SV-COMP's preprocessed inputs do, each with its .yml), one per
// convention. Each verdict below is argued from the program, not taken
// from a run:
//   - true: atomic_begin_end and atomic_function (a reader that sees y
//     written and x not needs the writer's section to be split; it runs
//     atomically), abort_assume (the paths that abort or fail an assume
//     are not executions), deadlock_is_no_error (a deadlock reaches no
//     error), failed_assert_is_no_error (glibc's assert failing aborts:
//     no reach_error), long_lp64 (2^31 fits an LP64 long);
//   - false: racy_increment (a lost update), spurious_wakeup (the
//     waiter may wake with no signal, as POSIX allows), abort_cuts_off
//     (the reader runs between the writer's write and its abort);
//   - unknown: atomic_interleaved (its only violating traces run the
//     reader inside the writer's section, at its nondet call: set aside,
//     not "false"), long_ilp32 (depends on long, and states ILP32),
//     nondet_int_sampled (the error needs a value outside the sampled
//     {0, 1}), racy_increment_data_race (a property Landslide does not
//     check).
//
// Score: 6 × 2 + 3 × 1. The CSV is written as tasks end, and a second run
// with it skips them all; a CSV that is not one is a usage error.
func TestSuiteSVCOMP(t *testing.T) {
	want := map[string]struct{ verdict, reason string }{
		"abort_assume": {"true", ""}, "atomic_begin_end": {"true", ""}, "atomic_function": {"true", ""},
		"deadlock_is_no_error": {"true", ""}, "failed_assert_is_no_error": {"true", ""}, "long_lp64": {"true", ""},
		"racy_increment": {"false", "reach_error() reached"}, "spurious_wakeup": {"false", "reach_error() reached"},
		"abort_cuts_off":           {"false", "reach_error() reached"},
		"atomic_interleaved":       {"unknown", "set aside"},
		"long_ilp32":               {"unknown", "data model ILP32, and global uses long"},
		"nondet_int_sampled":       {"unknown", "sampled: a __VERIFIER_nondet call's domain was cut"},
		"racy_increment_data_race": {"unknown", "property no-data-race is not checked"},
	}
	csvPath := filepath.Join(t.TempDir(), "svcomp.csv")
	code, stdout, stderr := runCLI("suite", "--svcomp", "testdata/svcomp", "--budget", "30s", "-c", "2", "--csv", csvPath, "--json")
	if code != ExitOK {
		t.Fatalf("suite --svcomp: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var doc SVCOMPJSON
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Tasks) != len(want) {
		t.Fatalf("%d tasks, want %d: %+v", len(doc.Tasks), len(want), doc.Tasks)
	}
	for _, r := range doc.Tasks {
		w, ok := want[r.Task]
		if !ok || r.Verdict != w.verdict || !strings.Contains(r.Reason, w.reason) || w.reason == "" && r.Reason != "" {
			t.Errorf("%s: %s (%s), want %s (%s)", r.Task, r.Verdict, r.Reason, w.verdict, w.reason)
		}
	}
	tot := SVCOMPTotal{Tasks: 13, CorrectTrue: 6, CorrectFalse: 3, Unknown: 4, Score: 15, Answered: 9.0 / 13}
	if doc.Totals != tot {
		t.Errorf("totals %+v, want %+v", doc.Totals, tot)
	}
	code, stdout, stderr = runCLI("suite", "--svcomp", "testdata/svcomp", "--budget", "30s", "--csv", csvPath)
	if code != ExitOK || !strings.Contains(stdout, "13 tasks already in") || !strings.Contains(stdout, "13 tasks: 6 correct true, 3 correct false, 0 wrong true, 0 wrong false, 4 unknown (69.2% answered); score 15") {
		t.Errorf("suite --svcomp again with the CSV: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if err := os.WriteFile(csvPath, []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI("suite", "--svcomp", "testdata/svcomp", "--csv", csvPath); code != ExitUsage || !strings.Contains(stderr, "not a suite --svcomp CSV") {
		t.Errorf("a CSV that is none: exit %d (%s)", code, stderr)
	}
	for _, args := range [][]string{
		{"suite", "--svcomp", "--sync-only", "testdata/svcomp"},   // SV-COMP's verdicts need every access a PP
		{"suite", "--svcomp", "-c", "0", "testdata/svcomp"},       // no worker
		{"suite", "--csv", csvPath, "testdata/svcomp"},            // --csv goes with --svcomp
		{"suite", "--svcomp", "testdata/svcomp/long_lp64.i"},      // not a directory of tasks
		{"suite", "--svcomp", filepath.Join(t.TempDir(), "none")}, // no such directory
	} {
		if code, _, stderr := runCLI(args...); code != ExitUsage || stderr == "" {
			t.Errorf("%v: exit %d (%s), want a usage error", args, code, stderr)
		}
	}
}

// TestExploreSVCOMP: explore --svcomp states the SV-COMP verdict beside
// its own: true only with every shared access a PP (for a PP set it is
// that set's verification, no verdict on the program), false with the
// bug report and exit 1, and the replay command keeps --svcomp.
func TestExploreSVCOMP(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		task  string
		flags []string
		code  int
		want  string
	}{
		{"atomic_function", []string{"--every-access"}, ExitOK, "SV-COMP verdict (unreach-call): true\n"},
		{"atomic_function", nil, ExitOK, "SV-COMP verdict (unreach-call): unknown (verified for this PP set only"},
		{"spurious_wakeup", []string{"--every-access"}, ExitBug, "SV-COMP verdict (unreach-call): false (reach_error() reached)"},
	} {
		elf := filepath.Join(dir, c.task+".elf")
		if code, _, stderr := runCLI("cc", "-o", elf, "testdata/svcomp/"+c.task+".i"); code != ExitOK {
			t.Fatalf("cc %s: exit %d\n%s", c.task, code, stderr)
		}
		args := append([]string{"explore", elf, "--svcomp", "--no-store", "--quiet", "--trace-dir", dir}, c.flags...)
		code, stdout, stderr := runCLI(args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s\n%s", args, code, c.code, c.want, stdout, stderr)
		}
		if c.code == ExitBug && !strings.Contains(stdout, "--every-access --svcomp --schedule") {
			t.Errorf("%v: the replay command does not keep --svcomp:\n%s", args, stdout)
		}
	}
}

// TestSVCOMPStrategiesAgree: SV-COMP mode's machine (atomic sections as
// one step, abort and failed assumes ending the program, deadlocks as
// end states, spurious wake-ups as choices) under each reducing strategy
// gives the verdict that brute force (--strategy full: every runnable
// thread, and every value, at every PP) gives, on each task of
// testdata/svcomp. abort_cuts_off was a wrong "true" under all of them
// (full too) while an abort was part of the writer's last step: the
// state between its write and its end was never one the reader saw.
func TestSVCOMPStrategiesAgree(t *testing.T) {
	dir := t.TempDir()
	tasks, err := filepath.Glob("testdata/svcomp/*.i")
	if err != nil || len(tasks) < 10 {
		t.Fatalf("%d tasks: %v", len(tasks), err)
	}
	verdict := func(elf, strategy string) string {
		code, stdout, stderr := runCLI("explore", elf, "--svcomp", "--every-access", "--no-store", "--quiet", "--no-minimize",
			"--trace-dir", dir, "--budget", "60s", "--strategy", strategy)
		i := strings.Index(stderr, "SV-COMP verdict (unreach-call): ")
		if i < 0 || code != ExitOK && code != ExitBug {
			t.Fatalf("%s --strategy %s: exit %d\n%s\n%s", elf, strategy, code, stdout, stderr)
		}
		v, _, _ := strings.Cut(stderr[i+len("SV-COMP verdict (unreach-call): "):], "\n")
		v, _, _ = strings.Cut(v, " ") // true, false or unknown, without the reason
		return v
	}
	for _, task := range tasks {
		elf := filepath.Join(dir, strings.TrimSuffix(filepath.Base(task), ".i")+".elf")
		if code, _, stderr := runCLI("cc", "-o", elf, task); code != ExitOK {
			t.Fatalf("cc %s: exit %d\n%s", task, code, stderr)
		}
		want := verdict(elf, "full")
		for _, s := range []string{"optimal", "dpor", "cbdpor"} {
			if got := verdict(elf, s); got != want {
				t.Errorf("%s: %s says %s, brute force %s", task, s, got, want)
			}
		}
	}
}
