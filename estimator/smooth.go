package estimator

import (
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
//   - §4.2.4: "estimates tend to get more accurate over time": only the
//     most recent half of the elapsed time is averaged, and §4.2.5: no ETA
//     before MinBranches interleavings.
//
// What is averaged is the estimated total (ETA = est(root) − elapsed,
// §3.4.3), not the ETA itself, so the ETA counts down between updates. The
// range is the 10th to 90th percentile of the samples in the window.
type Smoother struct {
	width   time.Duration // of a bucket
	buckets []bucket      // oldest first
	last    time.Duration // elapsed at the last estimate
	started bool
	elapsed time.Duration
}

// bucket sums the samples of one stretch of elapsed time, by weight.
type bucket struct {
	index int64   // elapsed / width
	w     float64 // total weight (time)
	re    float64 // Σ w·log(RE total)
	wbe   float64 // Σ w·log(elapsed/p)
}

// Forecast is the smoothed ETA and its range. OK is false while there is
// no meaningful estimate yet.
type Forecast struct {
	OK        bool
	ETA       time.Duration
	Low, High time.Duration
}

// Observe takes the estimate after a branch.
func (s *Smoother) Observe(e Estimate) {
	// An estimate weighs the time until the next one; the first one
	// (also the first after a resume) weighs nothing.
	dt := e.Elapsed - s.last
	if !s.started {
		dt = 0
	}
	s.last, s.elapsed, s.started = e.Elapsed, e.Elapsed, true
	if e.Branches < MinBranches || e.Proportion <= 0 || dt <= 0 {
		return
	}
	floor := float64(max(e.Elapsed, 1)) // a total is at least what was spent
	re := math.Log(max(float64(e.Total), floor))
	wbe := math.Log(max(float64(e.Elapsed)/e.Proportion, floor))
	if s.width == 0 {
		s.width = max(e.Elapsed/smoothBuckets, time.Millisecond)
	}
	for int64(e.Elapsed/s.width) >= s.firstIndex()+smoothBuckets {
		s.merge()
	}
	w := float64(dt)
	i := int64(e.Elapsed / s.width)
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

// merge drops the buckets that left the window, then doubles the width.
func (s *Smoother) merge() {
	s.buckets = slices.DeleteFunc(s.buckets, func(b bucket) bool { return !s.inWindow(b) })
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

// inWindow: the bucket ends after the first half of the elapsed time.
func (s *Smoother) inWindow(b bucket) bool {
	return time.Duration(b.index+1)*s.width > s.elapsed/2
}

// Forecast returns the smoothed ETA and its range as of the last estimate.
func (s *Smoother) Forecast() Forecast {
	var w, sum float64
	var samples []float64
	for _, b := range s.buckets {
		if b.w == 0 || !s.inWindow(b) {
			continue
		}
		w += 2 * b.w
		sum += b.re + b.wbe
		samples = append(samples, b.re/b.w, b.wbe/b.w)
	}
	if w == 0 {
		return Forecast{}
	}
	slices.Sort(samples)
	pct := func(q float64) float64 { return samples[int(math.Round(q*float64(len(samples)-1)))] }
	left := func(logTotal float64) time.Duration {
		t := math.Exp(logTotal)
		if t >= math.MaxInt64 {
			return math.MaxInt64 // past what a Duration holds: a conversion would wrap
		}
		return max(time.Duration(t)-s.elapsed, 0)
	}
	lo, hi := pct(0.1), pct(0.9)
	return Forecast{OK: true, ETA: left(min(max(sum/w, lo), hi)), Low: left(lo), High: left(hi)}
}
