package job

import (
	"strconv"
	"strings"
	"testing"

	"landslide/dpor"
	"landslide/internal/testutil"
)

// TestHTMTraceHTMLInChromium: the report of htm1's bug, rendered by a
// browser, shows the transactions: in the aborting thread's column the
// step whose event reads "transaction aborted (RETRY)" (the injected
// abort, at its _xbegin), and a committed transaction in the other's.
func TestHTMTraceHTMLInChromium(t *testing.T) {
	if _, err := testutil.ChromiumPath(); err != nil {
		t.Fatalf("headless Chromium is required for this test: %v\n(on Debian: %s)", err, testutil.ChromiumInstallHint)
	}
	res := htmRun(t, "htm/htm1", dpor.Spec{})
	if res.Bug == nil || res.Trace == nil {
		t.Fatalf("htm1: no bug trace (bug %v)", res.Bug)
	}
	root := browserDOM(t, res.Trace)
	// Which thread's step aborted, and which committed, by the trace.
	threadOf := func(event string) string {
		for _, s := range res.Trace.Steps {
			for _, e := range s.Events {
				if e == event {
					return strconv.Itoa(int(s.Thread))
				}
			}
		}
		return ""
	}
	for _, event := range []string{"transaction aborted (RETRY)", "transaction committed"} {
		want := threadOf(event)
		if want == "" {
			t.Fatalf("the trace has no %q event", event)
		}
		row := root.Find(func(n *testutil.Elem) bool {
			return n.Tag() == "tr" && n.Attr("data-thread") == want && n.Find(func(c *testutil.Elem) bool {
				return c.Tag() == "li" && strings.TrimSpace(c.Text()) == event
			}) != nil
		})
		if row == nil {
			t.Errorf("no row of thread %s shows %q", want, event)
		}
	}
}
