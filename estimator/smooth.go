package estimator

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// MinBranches is how many interleavings an exploration needs before its
// ETA means anything: the thesis's experience (§4.2.5) that ETAs "require
// around that much progress into the state space before they stabilize",
// which is also Quicksand's default --eta-threshold.
const MinBranches = 32

// smoothBuckets bounds the Smoother's memory: at most this many buckets,
// merged pairwise (and their width doubled) when full.
const smoothBuckets = 64

// Smoother reads the raw per-branch estimates the way the thesis says they
// must be read, and gives a steady ETA with a range (for people; Quicksand's
// Algorithm 3 keeps deciding on the raw ETA, as in the thesis).
//
// What the thesis says of the raw estimates:
//   - §8.3: the RE "can be unstable and erratic, bouncing wildly among
//     orders of magnitude even in the space of ten or fewer adjacent
//     interleavings", while the WBE counts "(nearly) monotonically up
//     toward the true value". One branch's RE is one noisy sample, not an
//     answer: the Smoother averages many, in the logarithm (the noise is a
//     factor, not a term), each weighted by the time of its branch (so a
//     burst of short branches does not outvote a long one).
//   - §3.4.3: the WBE percentage "serves as a progress bar [Mye85]"; read
//     as one, it gives a second estimate of the total time, elapsed/p. The
//     two estimators "can occasionally result in drastically differing
//     outputs" (§3.4.3): both are sampled, and their disagreement widens
//     the range.
//   - §3.4.3: both under-estimate while DPOR keeps tagging, and
//     over-estimate where sleep sets prune. The Smoother reads the sibling
//     model's versions of both (Estimate.ModelTotal, ModelProportion; see
//     Path), which learn the pruning; early in a run, when under-estimates
//     are the rule, it takes the larger of the two, and the closer the
//     end, the more the smaller (where the pruning the model does not
//     capture makes both over-estimate).
//   - §4.2.4: "estimates tend to get more accurate over time": only the
//     recent estimates are averaged. The range is the spread over a
//     window as long as the ETA they give (between 1/16 and 1/2 of the
//     elapsed time, found from the shortest). The ETA itself blends that
//     window's mean with the shortest window's, the more the shortest the
//     further the run is estimated to be: early the longer window keeps
//     it steady, later the shortest keeps it from lagging behind
//     estimates that move (a window as long as an over-estimated ETA
//     reached back to the older, higher estimates, and held the ETA 4–6×
//     too high at 90% of mutex_n). §4.2.5: no ETA before MinBranches
//     interleavings.
//
// What is averaged is the estimated total (ETA = est(root) − elapsed,
// §3.4.3), not the ETA itself, so the ETA counts down between updates. The
// range is the spread of the window's estimates (their 10th to 90th
// percentile, and at least the ETA), widened: by 2 at the end, by up to 4
// below and 8 above early on, as far as the calibration runs showed the
// estimates to be off (the estimators' own disagreement understates it;
// BENCHMARKS.md, "ETA calibration").
//
// A bounded search (iterative context bounding) restarts its tree, and the
// estimator's elapsed time, at each bound: the Smoother carries the time
// of the rounds before on (Forecast.Elapsed) and forecasts the current
// round.
type Smoother struct {
	width   time.Duration // of a bucket
	buckets []bucket      // oldest first
	last    time.Duration // the estimate's elapsed at the last estimate
	offset  time.Duration // the earlier rounds' elapsed
	started bool
	elapsed time.Duration // offset + last
}

// The Smoother's window and range (see its comment).
const (
	minWindow   = 16  // the shortest window: 1/minWindow of the elapsed time
	windowIters = 5   // steps from the shortest window toward the ETA's
	rangeQ      = 0.1 // the range's quantiles of the window's estimates
	rangeWiden  = 2.0 // the range's widening at the end
	rangeEarlyL = 2.0 // more below, times the estimated part left
	rangeEarlyH = 6.0 // more above, times the estimated part left
)

// bucket sums the samples of one stretch of elapsed time, by weight.
type bucket struct {
	index int64   // elapsed / width
	w     float64 // total weight (time)
	re    float64 // Σ w·log(RE total)
	wbe   float64 // Σ w·log(elapsed/p)
}

// Forecast is the smoothed ETA and its range. OK is false while there is
// no meaningful estimate yet. Elapsed is the estimator's elapsed time over
// all the rounds of a bounded search (the estimate's own Elapsed restarts
// at each).
type Forecast struct {
	OK        bool
	ETA       time.Duration
	Low, High time.Duration
	Elapsed   time.Duration
}

// Observe takes the estimate after a branch.
func (s *Smoother) Observe(e Estimate) {
	if s.started && e.Elapsed < s.last { // a new round
		s.offset += s.last
		s.last = 0
	}
	// An estimate weighs the time until the next one; the first one
	// (also the first after a resume) weighs nothing.
	dt := e.Elapsed - s.last
	if !s.started {
		dt = 0
	}
	s.last, s.started = e.Elapsed, true
	s.elapsed = s.offset + e.Elapsed
	prop, total := e.Proportion, e.Total
	if e.ModelProportion > 0 {
		prop, total = e.ModelProportion, e.ModelTotal
	}
	if e.Branches < MinBranches || prop <= 0 || dt <= 0 {
		return
	}
	floor := float64(max(e.Elapsed, 1)) // a total is at least what was spent
	off := float64(s.offset)
	re := math.Log(off + max(float64(total), floor))
	wbe := math.Log(off + max(float64(e.Elapsed)/prop, floor))
	if s.width == 0 {
		s.width = max(s.elapsed/smoothBuckets, time.Millisecond)
	}
	for int64(s.elapsed/s.width) >= s.firstIndex()+smoothBuckets {
		s.merge()
	}
	w := float64(dt)
	i := int64(s.elapsed / s.width)
	if n := len(s.buckets); n == 0 || s.buckets[n-1].index != i {
		s.buckets = append(s.buckets, bucket{index: i})
	}
	b := &s.buckets[len(s.buckets)-1]
	b.w += w
	b.re += w * re
	b.wbe += w * wbe
}

func (s *Smoother) firstIndex() int64 {
	if len(s.buckets) == 0 {
		return math.MaxInt64 / 2
	}
	return s.buckets[0].index
}

// merge drops the buckets that left the longest window, then doubles the
// width.
func (s *Smoother) merge() {
	s.buckets = slices.DeleteFunc(s.buckets, func(b bucket) bool { return !s.inWindow(b, s.elapsed/2) })
	s.width *= 2
	var out []bucket
	for _, b := range s.buckets {
		b.index /= 2
		if n := len(out); n > 0 && out[n-1].index == b.index {
			o := &out[n-1]
			o.w, o.re, o.wbe = o.w+b.w, o.re+b.re, o.wbe+b.wbe
			continue
		}
		out = append(out, b)
	}
	s.buckets = out
}

// inWindow: the bucket ends in the last window of the elapsed time.
func (s *Smoother) inWindow(b bucket, window time.Duration) bool {
	return time.Duration(b.index+1)*s.width > s.elapsed-window
}

// sample is one bucket's mean log total of one estimator, with its weight.
type sample struct{ v, w float64 }

// window is what the buckets of the last window of the elapsed time say:
// each estimator's weighted mean log total, and the samples.
type window struct {
	re, wbe float64
	samples []sample
}

func (s *Smoother) window(length time.Duration) (window, bool) {
	var out window
	var w float64
	for _, b := range s.buckets {
		if b.w == 0 || !s.inWindow(b, length) {
			continue
		}
		w += b.w
		out.re += b.re
		out.wbe += b.wbe
		out.samples = append(out.samples, sample{b.re / b.w, b.w}, sample{b.wbe / b.w, b.w})
	}
	if w == 0 {
		return out, false
	}
	out.re, out.wbe = out.re/w, out.wbe/w
	return out, true
}

// center is the window's log total, at the estimated progress q (0..1):
// the larger estimator's early, the smaller's at the end.
func (w window) center(q float64) float64 {
	return (1-q)*max(w.re, w.wbe) + q*min(w.re, w.wbe)
}

// quantile is the weighted q-quantile of the samples (sorted in place).
func quantile(ss []sample, q float64) float64 {
	slices.SortFunc(ss, func(a, b sample) int { return cmp.Compare(a.v, b.v) })
	var total float64
	for _, x := range ss {
		total += x.w
	}
	acc := 0.0
	for _, x := range ss {
		acc += x.w
		if acc >= q*total {
			return x.v
		}
	}
	return ss[len(ss)-1].v
}

// Elapsed is the estimator's elapsed time over all the rounds seen.
func (s *Smoother) Elapsed() time.Duration { return s.elapsed }

// Forecast returns the smoothed ETA and its range as of the last estimate.
func (s *Smoother) Forecast() Forecast {
	half, ok := s.window(s.elapsed / 2)
	if !ok {
		return Forecast{}
	}
	el := float64(s.elapsed)
	progress := func(logTotal float64) float64 { return min(el/math.Exp(logTotal), 1) }
	left := func(logTotal float64) float64 { return max(math.Exp(logTotal)-el, 0) }
	q := progress((half.re + half.wbe) / 2)
	// The range: from the shortest window, toward one as long as the ETA
	// it gives. The center: that window's, and the more the further the
	// run, the shortest's.
	short, ok := s.window(time.Duration(el / minWindow))
	if !ok {
		short = half
	}
	c := short.center(q)
	win, length := short, el/minWindow
	for range windowIters {
		length = min(max(left(win.center(q)), el/minWindow), el/2)
		if w, ok := s.window(time.Duration(length)); ok {
			win = w
		}
	}
	c = (1-q)*win.center(q) + q*c
	lo, hi := quantile(win.samples, rangeQ), quantile(win.samples, 1-rangeQ)
	lo, hi = min(lo, c), max(hi, c)
	d := func(x float64) time.Duration {
		if x >= math.MaxInt64 {
			return math.MaxInt64 // past what a Duration holds: a conversion would wrap
		}
		return time.Duration(x)
	}
	part := 1 - progress(c) // the estimated part left
	low := left(lo)
	if low < 0.99*math.MaxInt64 { // else a Duration's limit: the truth is past it
		low /= rangeWiden + rangeEarlyL*part
	}
	return Forecast{OK: true, ETA: d(left(c)), Low: d(low), High: d(left(hi) * (rangeWiden + rangeEarlyH*part)), Elapsed: s.elapsed}
}
