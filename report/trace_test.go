package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"landslide/record"
)

func fr(pc uint64, fn, file string, line int) Frame {
	f := Frame{PC: pc, Func: fn, File: file, Line: line}
	f.Text = fmtFrame(f)
	return f
}

func fmtFrame(f Frame) string {
	s := fmt.Sprintf("0x%08x in %s", f.PC, f.Func)
	if f.File != "" {
		s += fmt.Sprintf(" (%s:%d)", f.File, f.Line)
	}
	return s
}

// allLabels are the PP labels a trace can show (sync functions by name).
var allLabels = []string{"yield", "deschedule", "thread_create", "thread_exit", "make_runnable",
	"sleep", "mutex_lock", "data race", "annotation", "end"}

// sampleTrace is a hand-built deadlock trace with three threads and every
// PP label.
func sampleTrace() *Trace {
	mainF := fr(0x10100, "main", "fig1.c", 40)
	start := fr(0x10300, "thread_start", "thrlib.c", 12)
	worker := func(line int) Frame { return fr(0x10200+uint64(line), "worker", "fig1.c", line) }
	lockF := fr(0x10400, "mutex_lock", "mutex.c", 8)
	raceA := fr(0x10234, "worker", "fig1.c", 30)
	raceB := fr(0x10238, "worker", "fig1.c", 31)
	steps := []Step{
		{Thread: 1, PP: "thread_create", PPKind: "thread_create", Stack: []Frame{fr(0x10500, "thread_create", "thrlib.c", 20), mainF}, Events: []string{"created thread 2"}},
		{Thread: 1, PP: "thread_create", PPKind: "thread_create", Stack: []Frame{fr(0x10500, "thread_create", "thrlib.c", 20), fr(0x10104, "main", "fig1.c", 41)}, Events: []string{"created thread 3"}},
		{Thread: 2, Preempted: true, PP: "mutex_lock", PPKind: "sync_function", Stack: []Frame{lockF, worker(28), start}, Events: []string{"mutex_lock(0x1040) called"}},
		{Thread: 3, Preempted: true, PP: "data race", PPKind: "data_race", Stack: []Frame{raceA, start},
			Race: &RacePair{Access: raceA, Other: raceB, OtherThread: 2, Text: "races with thread 2's write at count (fig1.c:31)"}},
		{Thread: 2, PP: "yield", PPKind: "yield", Stack: []Frame{fr(0x10600, "yield", "syscall.S", 5), worker(33), start}, Events: []string{"mutex_lock(0x1040) returned"}},
		{Thread: 3, PP: "make_runnable", PPKind: "make_runnable", Stack: []Frame{fr(0x10610, "make_runnable", "syscall.S", 9), worker(35), start}, Events: []string{"made thread 1 runnable"}},
		{Thread: 1, PP: "sleep", PPKind: "sleep", Stack: []Frame{fr(0x10620, "sleep", "syscall.S", 11), fr(0x10108, "main", "fig1.c", 43)}},
		{Thread: 2, PP: "annotation", PPKind: "annotation", Stack: []Frame{fr(0x10630, "tell_landslide_preempt", "landslide.c", 3), worker(36), start}},
		{Thread: 3, PP: "thread_exit", PPKind: "thread_exit", Stack: []Frame{fr(0x10640, "vanish", "syscall.S", 14), start}, Events: []string{"exited"}},
		{Thread: 1, PP: "deschedule", PPKind: "deschedule", Stack: []Frame{fr(0x10650, "deschedule", "syscall.S", 17), fr(0x1010c, "main", "fig1.c", 45)}, Events: []string{"blocked"}},
		{Thread: 2, PP: "deschedule", PPKind: "deschedule", Stack: []Frame{fr(0x10650, "deschedule", "syscall.S", 17), worker(38), start}, Events: []string{"blocked"}},
		{Thread: 2, PP: "end", PPKind: "end", Stack: []Frame{fr(0x10650, "deschedule", "syscall.S", 17), worker(38), start}, Failure: true},
	}
	for i := range steps {
		steps[i].Index = i
	}
	return &Trace{
		Program: "fixtures/fig1.elf",
		PPSet:   []string{"mutex_lock", "mutex_unlock", "data_race 0x10234 (worker+52)"},
		Bug: &Bug{Kind: "deadlock", Message: "deadlock: threads 1 and 2 are blocked forever", Thread: 2, PC: 0x10650,
			Stack: []Frame{fr(0x10650, "deschedule", "syscall.S", 17), worker(38), start},
			Details: []Detail{
				{Title: "Thread 1 is blocked", Thread: 1, Text: "waits for thread 2 (thr_join)", Stack: []Frame{fr(0x10650, "deschedule", "syscall.S", 17), fr(0x1010c, "main", "fig1.c", 45)}},
				{Title: "Thread 2 is blocked", Thread: 2, Text: "waits for mutex 0x1040 held by thread 3 (exited)", Stack: []Frame{fr(0x10650, "deschedule", "syscall.S", 17), worker(38), start}},
			}},
		Interleavings: 51,
		EstimatedSize: 150,
		Coverage:      0.34,
		Preemptions:   2,
		Threads:       []int32{1, 2, 3},
		Steps:         steps,
		Replay:        "landslide replay --prefix '1,1,2,3,2,3,1,2,3,1,2' fixtures/fig1.elf",
	}
}

func TestSampleCoversEveryLabel(t *testing.T) {
	tr := sampleTrace()
	have := map[string]bool{}
	for _, s := range tr.Steps {
		have[s.PP] = true
	}
	for _, l := range allLabels {
		if !have[l] {
			t.Errorf("sample trace lacks PP label %q", l)
		}
	}
	if got := ThreadsOf(tr.Steps); !reflect.DeepEqual(got, tr.Threads) {
		t.Errorf("ThreadsOf = %v, want %v", got, tr.Threads)
	}
}

func TestPPLabel(t *testing.T) {
	want := map[record.PPKind]string{
		record.PPYield: "yield", record.PPBlock: "deschedule", record.PPCreate: "thread_create",
		record.PPExit: "thread_exit", record.PPMakeRunnable: "make_runnable", record.PPSleep: "sleep",
		record.PPDataRace: "data race", record.PPAnnotation: "annotation", record.PPEnd: "end",
	}
	for k, l := range want {
		if got := PPLabel(record.PP{Kind: k, Func: "f"}); got != l {
			t.Errorf("PPLabel(%v) = %q, want %q", k, got, l)
		}
	}
	if got := PPLabel(record.PP{Kind: record.PPSyncFunc, Func: "mutex_lock"}); got != "mutex_lock" {
		t.Errorf("PPLabel(sync mutex_lock) = %q", got)
	}
	if got := SyncEventText(record.SyncEvent{Kind: record.SyncReturn, Func: record.MutexLock, Arg: 0x1040}); got != "mutex_lock(0x1040) returned" {
		t.Errorf("SyncEventText = %q", got)
	}
	if got := SyncEventText(record.SyncEvent{Kind: record.SyncCreate, Other: 3}); got != "created thread 3" {
		t.Errorf("SyncEventText = %q", got)
	}
}

func TestTraceText(t *testing.T) {
	tr := sampleTrace()
	var b bytes.Buffer
	if err := tr.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"A bug was found! [deadlock]",
		"deadlock: threads 1 and 2 are blocked forever",
		"Current stack (thread 2):",
		"Thread 1 is blocked", "waits for thread 2 (thr_join)",
		"Thread 2 is blocked", "waits for mutex 0x1040 held by thread 3 (exited)",
		"Distinct interleavings tested: 51",
		"Estimated state space size: 150\n",
		"Estimated state space coverage: 34.00%",
		"Preemptions in this trace: 2",
		"PP set: mutex_lock, mutex_unlock, data_race 0x10234 (worker+52)",
		"#2 thread 2 [preempted] -> mutex_lock\n",
		"#3 thread 3 [preempted] -> data race\n",
		"races with thread 2's write at count (fig1.c:31)",
		"#11 thread 2 -> end  <-- failure\n",
		"created thread 3", "mutex_lock(0x1040) returned",
		"0x00010650 in deschedule (syscall.S:17)",
		"Replay: landslide replay --prefix",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	for _, l := range allLabels {
		if !strings.Contains(out, "-> "+l+"\n") && !strings.Contains(out, "-> "+l+"  <-- failure") {
			t.Errorf("text lacks PP label %q", l)
		}
	}
	if n := strings.Count(out, "<-- failure"); n != 1 {
		t.Errorf("%d failure marks, want 1", n)
	}
	if n := strings.Count(out, "[preempted]"); n != 2 {
		t.Errorf("%d preempted marks, want 2", n)
	}
	if testing.Verbose() {
		t.Log("\n" + out)
	}
}

func TestTraceTextNoBug(t *testing.T) {
	tr := sampleTrace()
	tr.Bug = nil
	tr.EstimatedSize = math.NaN()
	var b bytes.Buffer
	if err := tr.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "No bug") || !strings.Contains(out, "Estimated state space size: unknown") {
		t.Errorf("unexpected text:\n%s", out)
	}
}

func TestTraceJSONRoundTrip(t *testing.T) {
	tr := sampleTrace()
	var b bytes.Buffer
	if err := tr.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n  \"program\": \"fixtures/fig1.elf\"") {
		t.Errorf("JSON is not indented or lacks program:\n%s", b.String()[:200])
	}
	var back Trace
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, tr) {
		t.Errorf("JSON round trip differs:\n got %+v\nwant %+v", back, *tr)
	}

	// Non-finite estimates cannot be JSON; they are written as unknown (0).
	tr.EstimatedSize = math.Inf(1)
	b.Reset()
	if err := tr.WriteJSON(&b); err != nil {
		t.Fatalf("WriteJSON with an infinite estimate: %v", err)
	}
}

func renderHTML(t *testing.T, tr *Trace) string {
	t.Helper()
	var b bytes.Buffer
	if err := tr.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestTraceHTMLStructure(t *testing.T) {
	tr := sampleTrace()
	out := renderHTML(t, tr)
	for _, want := range []string{
		`<section id="summary">`, `class="bug-message"`, `<table id="trace">`,
		`<th>#</th><th>Thread 1</th><th>Thread 2</th><th>Thread 3</th>`,
		`class="pp pp-sync_function"`, `class="pp pp-data_race"`,
		"Distinct interleavings tested", "150", "34.00%", "Estimated state space coverage",
		"Thread 1 is blocked", "waits for mutex 0x1040 held by thread 3 (exited)",
		`id="legend"`, `id="replay"`, "landslide replay --prefix",
		"races with thread 2&#39;s write at count (fig1.c:31)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://", "<link", "src="} {
		if strings.Contains(out, bad) {
			t.Errorf("HTML is not self-contained: contains %q", bad)
		}
	}
	body := out[strings.Index(out, "<tbody>"):strings.Index(out, "</tbody>")]
	if n := strings.Count(body, "<tr "); n != len(tr.Steps) {
		t.Errorf("%d rows, want %d", n, len(tr.Steps))
	}
	if n := strings.Count(body, "<td"); n != len(tr.Steps)*(len(tr.Threads)+1) {
		t.Errorf("%d cells, want %d", n, len(tr.Steps)*(len(tr.Threads)+1))
	}
	if n := strings.Count(body, `class="active"`); n != len(tr.Steps) {
		t.Errorf("%d active cells, want %d", n, len(tr.Steps))
	}
	if n := strings.Count(body, `class="failure"`); n != 1 {
		t.Errorf("%d failure rows, want 1", n)
	}
	if n := strings.Count(body, `class="preempted"`); n != 2 {
		t.Errorf("%d preempted rows, want 2", n)
	}
	for _, l := range allLabels {
		if !strings.Contains(body, ">"+l+"</span>") {
			t.Errorf("HTML table lacks PP label %q", l)
		}
	}
}

func TestTraceHTMLEscapes(t *testing.T) {
	tr := sampleTrace()
	tr.Bug.Message = `assertion failed: <script>alert("x")</script> && a<b`
	tr.Steps[4].Events = append(tr.Steps[4].Events, `<img src=x onerror=alert(1)>`)
	tr.PPSet = append(tr.PPSet, `"><b>bold</b>`)
	tr.Steps[4].PPKind = `yield" onmouseover="alert(1)`
	out := renderHTML(t, tr)
	for _, bad := range []string{"<script", "<img", "<b>bold", `onmouseover="`} {
		if strings.Contains(out, bad) {
			t.Errorf("HTML contains unescaped %q", bad)
		}
	}
	if !strings.Contains(out, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp;&amp; a&lt;b") {
		t.Errorf("bug message not escaped as expected")
	}
}

// TestFormatSizeWhole: an estimated number of interleavings prints as a
// whole number (it printed "220.8"); huge ones in exponent form.
func TestFormatSizeWhole(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{220.8, "221"}, {0.4, "1"}, {12, "12"}, {2.5e16, "2.5e+16"}, {0, "unknown"}, {math.Inf(1), "infinite"}} {
		if got := formatSize(c.x); got != c.want {
			t.Errorf("formatSize(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}

type fakeObjects struct{}

func (fakeObjects) ObjectAt(addr uint64) (string, uint64, bool) {
	if addr >= 0x15030 && addr < 0x15040 {
		return "acct", 0x15030, true
	}
	return "", 0, false
}

// TestRaceDataNamed: a candidate's address is named by the global that
// holds it, with the offset inside it, in its one-line summary (it was a
// bare number); an address no symbol holds stays a number.
func TestRaceDataNamed(t *testing.T) {
	for _, c := range []struct {
		addr       uint64
		data, line string
	}{{0x15030, "acct", "0x15030 (acct): "}, {0x15034, "acct+4", "0x15034 (acct+4): "}, {0x2000000010, "", "0x2000000010: "}} {
		r := Race{Addr: c.addr, A: RaceAccess{Thread: 2, PC: 0x100, Write: true}, B: RaceAccess{Thread: 3, PC: 0x200}}
		r.Data = DataName(fakeObjects{}, c.addr)
		if r.Data != c.data || !strings.HasPrefix(r.Line(), c.line) {
			t.Errorf("0x%x: data %q, line %q; want %q, %q...", c.addr, r.Data, r.Line(), c.data, c.line)
		}
	}
}
