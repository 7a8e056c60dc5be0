// Package estimator predicts how big a partly explored execution tree is
// and how long it will take to finish (thesis §3.4.3, after Kilby et al.
// 2006 and Simsa, Bryant and Gibson 2012).
//
// Two estimators run side by side over the nodes of the current branch:
//
//   - The weighted-backtrack estimate (WBE) of the number of interleavings.
//     A completed branch b = v1…vn stands for the proportion
//     ∏ 1/|marked(vi)| of the tree, where marked(v) are the children of v
//     that are explored or tagged for exploration; the fraction done is the
//     sum of the completed branches' proportions, p, and the estimated size
//     is |B| / p.
//   - The recursive estimate (RE) of the total time: est(v) = usecs(v) +
//     |marked(v)|/|explored(v)| · Σ est(explored children of v), where
//     usecs(v) is the time of the transition into v. ETA = est(root) −
//     elapsed.
//
// Search is depth-first, so a subtree off the current branch is either
// finished or untouched: each node of the branch keeps the sums of its
// finished children's estimates, and both estimates are recomputed from the
// leaf up in O(depth) after every branch. This gives exactly the figures of
// the thesis's worked example (estimator_test.go), including the effect of
// tags added to a node after some of its subtrees finished.
//
// Both assume a node's unexplored tagged children are like its explored
// ones; under sleep sets (and a preemption bound) the later children are
// smaller, and both over-estimate (§3.4.3). The thesis lists modelling
// that pruning as future work (§8.3). The sibling model does it by
// position: a node's first child is the one the search took first (under
// a bound the one that does not preempt; under sleep sets the one with no
// sibling asleep), its second is Kappa times the first, and each later
// one Ratio times the one before (under sleep sets each has one more
// sibling asleep than the one before it). Both factors are learned from
// the consecutive siblings that finished (a weighted mean of the logs of
// their ratios, at most 1), and the model gives both estimates again with
// a node of s children seen of m standing for W(m)/W(s) of what they
// took, W(n) = 1 + Kappa·Σ_{j<n−1} Ratio^j, where the thesis takes m/s
// (Estimate.ModelProportion, ModelTotal). Why by position: one factor for
// all the unexplored children (this package's model until 2026-11-28)
// learns the average shrink and cannot follow a geometric one, where the
// children left at a node near the root are far smaller than the average
// (readers 16 under optimal DPOR: 10.0 s, 5.1 s, 2.6 s, 1.4 s, … at its
// root, and the ETA 4–8× too high at the end). It leaves the thesis's
// estimates as they are (estimator_test.go checks them).
//
// The thesis's estimates are for Quicksand's scheduling (thesis Algorithm
// 3 reads them as they are). For people, a Smoother reads the sibling
// model's as the thesis says estimates must be read (§8.3: the RE is
// erratic from one interleaving to the next, the WBE steadier; §4.2.5:
// nothing before 32 interleavings): a time-weighted average of both
// estimators' totals, in the logarithm, early the larger of the two and
// at the end the smaller. Its range is the spread of the estimates over a
// window as long as the ETA they give, widened; its ETA blends that
// window's mean with the last sixteenth of the run's, the more the latter
// the further the run (steady early, no lag at the end: smooth.go).
// BENCHMARKS.md's "ETA calibration" measures it against the truth
// (bench/cmd/etacal).
package estimator
