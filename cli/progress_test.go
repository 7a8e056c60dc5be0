package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// progressLineRE is a plain progress line: the smoothed ETA with its range.
var progressLineRE = regexp.MustCompile(`^explore: \d+ interleavings, (estimated \d+\.\d% explored of about \d+ interleavings|coverage unknown), ` +
	`(ETA not known yet|ETA \w+, likely \w+–\w+), elapsed \w+, \d+ race candidates$`)

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// TestProgressPlainLines: when stderr is not a terminal (here a buffer),
// progress is plain lines, one per report, no carriage return or escape
// sequence, each with the smoothed ETA and its range once 32
// interleavings are in.
func TestProgressPlainLines(t *testing.T) {
	code, _, errOut, _ := explore(t, fixture(t, "ref/paraguay"), "--interval", "1ms", "--max-interleavings", "3000")
	if code != ExitBudget {
		t.Fatalf("exit %d, want 3", code)
	}
	if strings.ContainsAny(errOut, "\r\x1b") {
		t.Fatalf("not plain lines: %q", errOut)
	}
	known := 0
	for _, l := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
		if !strings.HasPrefix(l, "explore: ") {
			continue
		}
		if !progressLineRE.MatchString(l) {
			t.Errorf("progress line %q", l)
		}
		if strings.Contains(l, "likely") {
			known++
		}
	}
	if known == 0 {
		t.Errorf("no progress line with an ETA range among:\n%s", errOut[:min(len(errOut), 600)])
	}
}

// TestLiveStatusInPlace: on a terminal the bar is redrawn in place: no
// newline of its own, each redraw returns to the start of the line, a
// status too wide for the terminal is cut (it would wrap and break the
// redraw), whole lines go above the bar, and Done erases it.
func TestLiveStatusInPlace(t *testing.T) {
	var buf bytes.Buffer
	s := newLiveStatus(&buf, func() int { return 60 })
	if !s.live() {
		t.Fatal("not live")
	}
	s.Update(0.10, "ETA 10s, likely 5s–20s")
	s.Update(0.25, "ETA 8s, likely 4s–16s · "+strings.Repeat("x", 200))
	if n := strings.Count(buf.String(), "\n"); n != 0 {
		t.Fatalf("the bar printed %d newlines: %q", n, buf.String())
	}
	if c := strings.Count(buf.String(), "\r"); c < 2 {
		t.Fatalf("%d carriage returns for two redraws: %q", c, buf.String())
	}
	for _, seg := range strings.Split(buf.String(), "\r") {
		seg = ansiRE.ReplaceAllString(seg, "") // not printed
		if w := utf8.RuneCountInString(seg); w > 60 {
			t.Errorf("a redraw %d columns wide on a 60-column terminal: %q", w, seg)
		}
	}
	if !strings.Contains(buf.String(), "25%") || !strings.Contains(buf.String(), "ETA 8s") {
		t.Errorf("the second redraw is not there: %q", buf.String())
	}

	buf.Reset()
	s.Line("==== PROGRESS REPORT ====\n[JOB 1] Running")
	out := buf.String()
	report := strings.Index(out, "==== PROGRESS REPORT ====\n[JOB 1] Running\n")
	if report < 0 || !strings.Contains(out[:report], "\x1b[2K\r") {
		t.Fatalf("the report is not printed on a cleared line: %q", out)
	}
	if !strings.Contains(out[report:], "25%") {
		t.Errorf("the bar is not redrawn under the report: %q", out)
	}

	buf.Reset()
	s.Done()
	if buf.String() != "\x1b[2K\r" {
		t.Errorf("Done wrote %q, want the line erased", buf.String())
	}
	buf.Reset()
	s.Line("Stored as run x")
	if buf.String() != "Stored as run x\n" {
		t.Errorf("after Done, a line is %q", buf.String())
	}
}
