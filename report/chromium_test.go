package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTraceHTMLInChromium renders the sample trace, loads it in headless
// Chromium and checks the DOM the browser built. Chromium is required: the
// test fails (it does not skip) when the browser is missing.
func TestTraceHTMLInChromium(t *testing.T) {
	if _, err := ChromiumPath(); err != nil {
		t.Fatalf("headless Chromium is required for this test: %v\n(on Debian: %s)", err, chromiumInstallHint)
	}
	tr := sampleTrace()
	tr.Bug.Message = `deadlock: <script>document.title="pwned"</script> threads 1 & 2 wait forever`
	path := filepath.Join(t.TempDir(), "trace.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	dom, err := DumpDOM(path)
	if err != nil {
		t.Fatalf("DumpDOM: %v", err)
	}
	t.Logf("chromium --dump-dom took %v (%d bytes)", time.Since(start).Round(time.Millisecond), len(dom))

	if err := CheckTraceDOM(dom, tr); err != nil {
		t.Errorf("the DOM does not match the trace:\n%v", err)
	}
	root := parseDOM(dom)
	if s := root.find(func(n *domNode) bool { return n.Tag == "script" }); s != nil {
		t.Errorf("the bug message injected a <script> element: %q", s.text())
	}
	if ti := root.find(func(n *domNode) bool { return n.Tag == "title" }); ti == nil || strings.Contains(ti.text(), "pwned") {
		t.Errorf("title missing or changed by the page: %+v", ti)
	}
	if root.find(func(n *domNode) bool { return n.Attrs["id"] == "legend" }) == nil {
		t.Error("no legend in the DOM")
	}
	// The check is not vacuous on a browser's DOM either.
	other := sampleTrace()
	other.Bug.Message = tr.Bug.Message
	other.Steps[5].Thread = 2
	if err := CheckTraceDOM(dom, other); err == nil {
		t.Error("CheckTraceDOM accepted the DOM against a different trace")
	}
}

func TestDumpDOMMissingFile(t *testing.T) {
	if _, err := DumpDOM(filepath.Join(t.TempDir(), "absent.html")); err == nil {
		t.Error("DumpDOM of a missing file succeeded")
	}
}
