package job

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"landslide/internal/testutil"
	"landslide/report"
)

// TestLinearizabilityHTMLInChromium: the report of the racy counter's
// linearizability bug, rendered by a browser, shows the history as one
// block per thread (its calls in order, the offending result marked) and,
// in the trace, the steps where calls began and returned.
func TestLinearizabilityHTMLInChromium(t *testing.T) {
	if _, err := testutil.ChromiumPath(); err != nil {
		t.Fatalf("headless Chromium is required for this test: %v\n(on Debian: %s)", err, testutil.ChromiumInstallHint)
	}
	res, err := lineupJob(t, "posix/lineup_counter", "cbdpor", "1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Bug == nil || res.Trace == nil {
		t.Fatalf("no bug trace (bug %v)", res.Bug)
	}
	root := browserDOM(t, res.Trace)
	marked := 0
	for _, d := range res.Bug.Details {
		block := root.Find(func(n *testutil.Elem) bool {
			return n.Tag() == "div" && n.Attr("class") == "detail" && strings.Contains(n.Text(), d.Title) && strings.Contains(n.Text(), d.Text)
		})
		if block == nil {
			t.Errorf("no block shows %q: %s", d.Title, d.Text)
		}
		if strings.Contains(d.Text, "✗") {
			marked++
		}
	}
	if len(res.Bug.Details) != 2 || marked == 0 {
		t.Errorf("history %+v: want two threads' calls, an offending result marked", res.Bug.Details)
	}
	for _, event := range []string{"call inc(0) began", "call inc returned 0"} {
		if root.Find(func(n *testutil.Elem) bool { return n.Tag() == "li" && strings.TrimSpace(n.Text()) == event }) == nil {
			t.Errorf("no step of the trace shows %q", event)
		}
	}
}

// browserDOM renders tr's HTML report in headless Chromium, checks that
// the DOM shows the trace (testutil.CheckTraceDOM), and returns it.
func browserDOM(t *testing.T, tr *report.Trace) *testutil.Elem {
	t.Helper()
	var b bytes.Buffer
	if err := tr.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, err := testutil.DumpDOM(path)
	if err != nil {
		t.Fatalf("DumpDOM: %v", err)
	}
	if err := testutil.CheckTraceDOM(dom, tr); err != nil {
		t.Errorf("the DOM does not match the trace:\n%v", err)
	}
	root, err := testutil.ParseDOM(dom)
	if err != nil {
		t.Fatal(err)
	}
	return root
}
