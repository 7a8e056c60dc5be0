package report_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"landslide/internal/testutil"
	"landslide/report"
)

// probe is appended to a copy of the report: it scrolls the page down
// (never sideways) to the failing row, and records where the failing cell
// is on the screen in an attribute that --dump-dom shows.
const probe = `<script>
const cell = document.querySelector('tr.failure td.active');
const row = cell.closest('tr');
window.scrollTo(0, row.getBoundingClientRect().top + window.scrollY - 100);
const r = cell.getBoundingClientRect();
document.documentElement.setAttribute('data-probe',
  [Math.round(r.left), Math.round(r.right), Math.round(r.top), Math.round(r.bottom), window.innerWidth, window.innerHeight].join(','));
</script>`

var probeAttr = regexp.MustCompile(`data-probe="(-?\d+),(-?\d+),(-?\d+),(-?\d+),(\d+),(\d+)"`)

// TestFailingCellInView: at 1400×1000, a report with twelve threads fits
// the window (or scrolls within itself) so that the failing cell, in the
// rightmost column, is in view once the page is scrolled down to its row.
func TestFailingCellInView(t *testing.T) {
	if _, err := testutil.ChromiumPath(); err != nil {
		t.Fatalf("headless Chromium is required for this test: %v\n(on Debian: %s)", err, testutil.ChromiumInstallHint)
	}
	var b strings.Builder
	if err := report.WideTrace(12).WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := strings.Replace(b.String(), "</body>", probe+"\n</body>", 1)
	path := filepath.Join(t.TempDir(), "wide.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, err := testutil.DumpDOM(path, "--window-size=1400,1000", "--hide-scrollbars")
	if err != nil {
		t.Fatal(err)
	}
	m := probeAttr.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not run:\n%.400s", dom)
	}
	var left, right, top, bottom, w, h int
	fmt.Sscan(strings.Join(m[1:], " "), &left, &right, &top, &bottom, &w, &h)
	if w < 1300 || w > 1400 {
		t.Fatalf("the window is %d px wide, want 1400", w)
	}
	if left < 0 || right > w || top < 0 || bottom > h {
		t.Errorf("the failing cell is at x %d..%d, y %d..%d: not within the %d×%d window", left, right, top, bottom, w, h)
	}
}
