package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"landslide/check"
)

// liveEvery is how often a live bar is redrawn (a terminal only; plain
// lines keep --interval).
const liveEvery = 250 * time.Millisecond

// statusOut writes progress to stderr: on a terminal, one live bar redrawn
// in place, with whole lines (quicksand's reports, race notices) printed
// above it; elsewhere (a file, a pipe, a test's buffer) plain lines only.
type statusOut struct {
	w     io.Writer
	mu    sync.Mutex
	bar   *progressbar.ProgressBar // nil: plain lines
	width func() int               // the terminal's columns
	shown bool                     // the bar is on the screen
}

// newStatusOut detects whether w is a terminal.
func newStatusOut(w io.Writer) *statusOut {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || os.Getenv("TERM") == "dumb" {
		return &statusOut{w: w}
	}
	return newLiveStatus(w, func() int {
		if c, _, err := term.GetSize(int(f.Fd())); err == nil && c > 0 {
			return c
		}
		return 80
	})
}

// newLiveStatus is the terminal mode on w, whose width is given by width.
func newLiveStatus(w io.Writer, width func() int) *statusOut {
	bar := progressbar.NewOptions64(1000,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(20),
		progressbar.OptionSetPredictTime(false), // ours is the thesis's estimator, smoothed
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionSetTheme(progressbar.ThemeASCII),
	)
	return &statusOut{w: w, bar: bar, width: width}
}

// live reports whether progress goes to a live bar.
func (s *statusOut) live() bool { return s.bar != nil }

// Update redraws the bar: fraction (0..1) done and a one-line status.
// Without a terminal it does nothing: plain lines go through Line.
func (s *statusOut) Update(fraction float64, status string) {
	if s.bar == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The bar's own part takes about 30 columns; a status that wrapped
	// would break the redraw in place.
	status = fitStatus(status, max(s.width()-32, 10))
	s.bar.Describe(status)
	// Never 1000: the bar would call itself finished and stop drawing.
	_ = s.bar.Set64(min(max(int64(fraction*1000), 0), 999))
	s.shown = true
}

// Line prints whole lines (a trailing newline is added if missing); on a
// terminal, above the bar, which is redrawn under them.
func (s *statusOut) Line(text string) {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bar == nil || !s.shown {
		io.WriteString(s.w, text)
		return
	}
	_ = s.bar.Clear()
	io.WriteString(s.w, text)
	_ = s.bar.RenderBlank()
}

// Done erases the bar, for the results that follow.
func (s *statusOut) Done() {
	if s.bar == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown {
		_ = s.bar.Clear()
		s.shown = false
	}
}

// statusSep separates the parts of a live status.
const statusSep = " · "

// fitStatus cuts a live status to room columns at a boundary between its
// parts (statusSep), so that no figure is cut: the parts that do not fit
// are left out, marked "…". Only a first part wider than room itself is
// cut within (a terminal narrower than the ETA).
func fitStatus(status string, room int) string {
	if utf8.RuneCountInString(status) <= room {
		return status
	}
	parts := strings.Split(status, statusSep)
	out := parts[0]
	if r := []rune(out); len(r) > room {
		return string(r[:room-1]) + "…"
	}
	for _, p := range parts[1:] {
		next := out + statusSep + p
		if utf8.RuneCountInString(next)+len(statusSep) >= room { // keep room for " …"
			break
		}
		out = next
	}
	return out + " …"
}

// forecastText is the smoothed ETA and its likely range, scaled by scale
// (the ratio of the wall clock to the estimator's); det: the clock counts
// interleavings.
func forecastText(f check.Forecast, scale float64, det bool) string {
	return forecast(f, scale, det, durationText, "ETA %s, likely %s–%s")
}

// liveForecastText is forecastText for the live bar: the same figures,
// shorter (compactDuration), so that with the rest of the status they fit
// an 80-column terminal uncut.
func liveForecastText(f check.Forecast, scale float64, det bool) string {
	return forecast(f, scale, det, compactDuration, "ETA %s (likely %s–%s)")
}

// forecast writes f in layout (ETA, low, high), times printed by dur.
func forecast(f check.Forecast, scale float64, det bool, dur func(float64) string, layout string) string {
	if !f.OK {
		return "ETA not known yet"
	}
	if det {
		n := func(d time.Duration) string { return fmt.Sprint(int64(d)) }
		return fmt.Sprintf(strings.Replace(layout, "ETA %s", "ETA %s interleavings", 1), n(f.ETA), n(f.Low), n(f.High))
	}
	r := func(d time.Duration) string { return dur(float64(d) * scale) }
	return fmt.Sprintf(layout, r(f.ETA), r(f.Low), r(f.High))
}

// compactDuration prints a time in nanoseconds in at most two units
// ("3h07m" to the minute, "12m05s", "45s" to the second), or ">290y" past
// what a time.Duration holds.
func compactDuration(ns float64) string {
	if math.IsNaN(ns) || ns < 0 || ns >= math.MaxInt64 {
		return ">290y"
	}
	s := int64(time.Duration(ns).Round(time.Second) / time.Second)
	switch {
	case s >= 3600-30:
		m := (s + 30) / 60 // to the minute
		return fmt.Sprintf("%dh%02dm", m/60, m%60)
	case s >= 60:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%ds", s)
}

// durationText prints a time in nanoseconds to the second, or "over 290
// years" past what a time.Duration holds (an estimate of a state space
// too large to finish; converting it would wrap to a negative time).
func durationText(ns float64) string {
	if math.IsNaN(ns) || ns < 0 || ns >= math.MaxInt64 {
		return "over 290 years"
	}
	return time.Duration(ns).Round(time.Second).String()
}

// wallScale is how much longer the wall clock ran than the estimator's
// time (which leaves out the analysis between interleavings), so that an
// ETA in the estimator's time reads in wall time. est is the estimator's
// time over all the rounds of a bounded search (Forecast.Elapsed).
func wallScale(wall, est time.Duration) float64 {
	if wall <= 0 || est <= 0 || wall < est {
		return 1
	}
	return float64(wall) / float64(est)
}
