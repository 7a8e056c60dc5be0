package cli

import (
	"bytes"
	"io"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"landslide/estimator"
	"landslide/job"
	"landslide/quicksand"
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

// TestQuicksandReportSmoothedETA: quicksand's progress report shows a
// running job's smoothed ETA with its range (the raw RE of its last
// interleaving said ten times too much), and a deferred job the raw ETA
// the scheduler suspended it on beside the smoothed one.
func TestQuicksandReportSmoothedETA(t *testing.T) {
	s := quicksand.New(quicksand.Options{Budget: time.Hour}, []string{"mutex_lock", "mutex_unlock"})
	run, deferred := s.Jobs[0], s.Jobs[1]
	s.Start(run)
	s.Start(deferred)
	q := &qsRun{prog: newQSProgress(&statusOut{w: io.Discard})}
	// The true total is 1000 s; the RE says 10× too much and 10× too
	// little on alternate interleavings; the job's wall clock runs with
	// the estimator's.
	const total = 1000 * time.Second
	for n := 1; n <= 400; n++ {
		el := time.Duration(n) * 100 * time.Millisecond
		re := total * 10
		if n%2 == 1 {
			re = total / 10
		}
		e := estimator.Estimate{Branches: n, Proportion: float64(el) / float64(total), Total: re, Elapsed: el}
		s.Progress(run, n, float64(e.ETA()), e.Proportion, el)
		q.observe(run.ID, job.Step{Interleavings: n, Estimate: e, Wall: el})
		q.observe(deferred.ID, job.Step{Interleavings: n, Estimate: e, Wall: el})
	}
	if raw := time.Duration(run.ETA); raw < 2*time.Hour {
		t.Fatalf("the scheduler's ETA is %v: the last raw RE should say about 10000 s", raw)
	}
	s.Suspended(deferred)
	deferred.ETA, deferred.Proportion = float64(3*time.Hour), 0.04
	var b strings.Builder
	q.progress(&b, s, false)
	out := b.String()
	// 1000 s − 40 s elapsed, within the minute (the average of the
	// window's logarithms cancels the noise on whole pairs; the ETA
	// follows the last sixteenth of the run, which need not hold whole
	// pairs).
	if !strings.Contains(out, "[JOB 1] Running (4.0%; ETA 16m") {
		t.Errorf("the running job's line is not the smoothed ETA of 16m0s with a range:\n%s", out)
	}
	if !strings.Contains(out, "[JOB 2] Deferred... (4.0%; suspended on an ETA of 3h0m0s; smoothed ETA 16m") {
		t.Errorf("the deferred job's line does not give the scheduler's ETA and the smoothed one:\n%s", out)
	}
}

// TestForecastTextHuge: a forecast past what a Duration holds, scaled to
// the wall clock, reads "over 290 years", never a negative time.
func TestForecastTextHuge(t *testing.T) {
	got := forecastText(estimator.Forecast{OK: true, ETA: 1 << 62, Low: time.Hour, High: 1<<63 - 1}, 3, false)
	if want := "ETA over 290 years, likely 3h0m0s–over 290 years"; got != want {
		t.Errorf("forecastText: %q, want %q", got, want)
	}
}

// TestLiveBarKeepsETADigits: on an 80-column terminal the live bar's
// status is cut to fit, but never within the ETA and its range, however
// long (hours, and past what a Duration holds): the parts after it that
// do not fit are left out whole.
func TestLiveBarKeepsETADigits(t *testing.T) {
	p := job.Progress{
		Interleavings: 123456789,
		Estimate:      estimator.Estimate{Proportion: 1e-9, Size: 123456789012345, Elapsed: 100 * time.Hour},
		Forecast:      estimator.Forecast{OK: true, ETA: 3*time.Hour + 7*time.Minute, Low: 59*time.Minute + 59*time.Second, High: 1<<63 - 1},
		Wall:          200 * time.Hour,
		Races:         12345,
	}
	line := liveLine(p)
	// The wall clock ran twice the estimator's: the ETA reads doubled.
	const eta = "ETA 6h14m (likely 2h00m–>290y)"
	if !strings.HasPrefix(line, eta+statusSep) {
		t.Fatalf("live line %q does not start with %q", line, eta)
	}
	var buf bytes.Buffer
	s := newLiveStatus(&buf, func() int { return 80 })
	s.Update(0.5, line)
	out := ansiRE.ReplaceAllString(buf.String(), "")
	if !strings.Contains(out, "50%") || !strings.Contains(out, eta+" …") {
		t.Errorf("the bar does not show the whole ETA: %q", out)
	}
	for _, seg := range strings.Split(out, "\r") {
		if w := utf8.RuneCountInString(seg); w > 80 {
			t.Errorf("a redraw %d columns wide on an 80-column terminal: %q", w, seg)
		}
	}
}

// TestFitStatus: a status too long for its room loses whole parts from
// the end, never digits within one; a first part longer than the room
// (a very narrow terminal) is cut.
func TestFitStatus(t *testing.T) {
	parts := []string{"ETA 12h05m (likely 3h00m–>290y)", "42 interleavings", "5s elapsed"}
	full := strings.Join(parts, statusSep)
	for _, c := range []struct {
		room int
		want string
	}{
		{100, full},
		{len([]rune(full)), full},
		{60, parts[0] + statusSep + parts[1] + " …"},
		{40, parts[0] + " …"},
		{20, "ETA 12h05m (likely …"},
	} {
		if got := fitStatus(full, c.room); got != c.want {
			t.Errorf("room %d: %q, want %q", c.room, got, c.want)
		}
		if got := fitStatus(full, c.room); utf8.RuneCountInString(got) > c.room {
			t.Errorf("room %d: %q is wider", c.room, got)
		}
	}
}

// TestCompactDuration: the live bar's durations.
func TestCompactDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {1499 * time.Millisecond, "1s"}, {59 * time.Second, "59s"}, {61 * time.Second, "1m01s"},
		{3*time.Hour + 7*time.Minute + 40*time.Second, "3h08m"}, {59*time.Minute + 45*time.Second, "1h00m"}, {1000 * time.Hour, "1000h00m"}, {1<<63 - 1, ">290y"},
	} {
		if got := compactDuration(float64(c.d)); got != c.want {
			t.Errorf("%v: %q, want %q", c.d, got, c.want)
		}
	}
	if got := compactDuration(math.Inf(1)); got != ">290y" {
		t.Errorf("+Inf: %q", got)
	}
}
