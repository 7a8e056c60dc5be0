package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"landslide/internal/testutil"
	"landslide/report"
)

// TestTraceHTMLInChromium renders the sample trace, loads it in headless
// Chromium and checks the DOM the browser built. Chromium is required: the
// test fails (it does not skip) when the browser is missing.
func TestTraceHTMLInChromium(t *testing.T) {
	if _, err := testutil.ChromiumPath(); err != nil {
		t.Fatalf("headless Chromium is required for this test: %v\n(on Debian: %s)", err, testutil.ChromiumInstallHint)
	}
	tr := report.SampleTrace()
	tr.Bug.Message = `deadlock: <script>document.title="pwned"</script> threads 1 & 2 wait forever`
	path := filepath.Join(t.TempDir(), "trace.html")
	if err := os.WriteFile(path, []byte(report.RenderHTML(t, tr)), 0o644); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	dom, err := testutil.DumpDOM(path)
	if err != nil {
		t.Fatalf("DumpDOM: %v", err)
	}
	t.Logf("chromium --dump-dom took %v (%d bytes)", time.Since(start).Round(time.Millisecond), len(dom))

	if err := testutil.CheckTraceDOM(dom, tr); err != nil {
		t.Errorf("the DOM does not match the trace:\n%v", err)
	}
	root, err := testutil.ParseDOM(dom)
	if err != nil {
		t.Fatal(err)
	}
	if s := root.Find(func(n *testutil.Elem) bool { return n.Tag() == "script" }); s != nil {
		t.Errorf("the bug message injected a <script> element: %q", s.Text())
	}
	if ti := root.Find(func(n *testutil.Elem) bool { return n.Tag() == "title" }); ti == nil || strings.Contains(ti.Text(), "pwned") {
		t.Errorf("title missing or changed by the page: %+v", ti)
	}
	if root.Find(func(n *testutil.Elem) bool { return n.Attr("id") == "legend" }) == nil {
		t.Error("no legend in the DOM")
	}
	// The check is not vacuous on a browser's DOM either.
	other := report.SampleTrace()
	other.Bug.Message = tr.Bug.Message
	other.Steps[5].Thread = 2
	if err := testutil.CheckTraceDOM(dom, other); err == nil {
		t.Error("CheckTraceDOM accepted the DOM against a different trace")
	}
}

// TestTraceHTMLSourcePassesDOMCheck: the rendered source, parsed as a
// browser parses it, passes the DOM check, escapes included.
func TestTraceHTMLSourcePassesDOMCheck(t *testing.T) {
	tr := report.SampleTrace()
	if err := testutil.CheckTraceDOM(report.RenderHTML(t, tr), tr); err != nil {
		t.Errorf("CheckTraceDOM on the rendered source: %v", err)
	}
	tr.Bug.Message = `assertion failed: <script>alert("x")</script> && a<b`
	tr.Steps[4].Events = append(tr.Steps[4].Events, `<img src=x onerror=alert(1)>`)
	tr.PPSet = append(tr.PPSet, `"><b>bold</b>`)
	tr.Steps[4].PPKind = `yield" onmouseover="alert(1)`
	if err := testutil.CheckTraceDOM(report.RenderHTML(t, tr), tr); err != nil {
		t.Errorf("CheckTraceDOM with hostile strings: %v", err)
	}
}

// TestCheckTraceDOMRejects: the DOM of one trace fails the check against
// any other, and a damaged DOM fails it.
func TestCheckTraceDOMRejects(t *testing.T) {
	tr := report.SampleTrace()
	out := report.RenderHTML(t, tr)
	mutations := []struct {
		name   string
		mutate func(*report.Trace)
	}{
		{"thread moved", func(x *report.Trace) { x.Steps[3].Thread = 1 }},
		{"failure moved", func(x *report.Trace) { x.Steps[11].Failure = false; x.Steps[10].Failure = true }},
		{"preemption added", func(x *report.Trace) { x.Steps[0].Preempted = true }},
		{"extra step", func(x *report.Trace) { x.Steps = append(x.Steps, x.Steps[0]) }},
		{"extra thread", func(x *report.Trace) { x.Threads = append(x.Threads, 4) }},
		{"columns reordered", func(x *report.Trace) { x.Threads = []int32{2, 1, 3} }},
		{"label changed", func(x *report.Trace) { x.Steps[4].PP = "sleep" }},
		{"kind changed", func(x *report.Trace) { x.Steps[4].PPKind = "sleep" }},
		{"message changed", func(x *report.Trace) { x.Bug.Message = "something else" }},
	}
	for _, m := range mutations {
		x := report.SampleTrace()
		m.mutate(x)
		if err := testutil.CheckTraceDOM(out, x); err == nil {
			t.Errorf("%s: CheckTraceDOM accepted a DOM of another trace", m.name)
		}
	}
	if err := testutil.CheckTraceDOM("<html><body><p>nothing</p></body></html>", tr); err == nil {
		t.Error("CheckTraceDOM accepted a page without the table")
	}
	// Corrupt the DOM itself: an extra cell in a row.
	bad := strings.Replace(out, "<td></td>", "<td></td><td></td>", 1)
	if bad == out {
		t.Fatal("no empty cell to duplicate")
	}
	if err := testutil.CheckTraceDOM(bad, tr); err == nil {
		t.Error("CheckTraceDOM accepted a row with an extra cell")
	}
}
