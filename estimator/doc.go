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
// The raw estimates are for Quicksand's scheduling (thesis Algorithm 3
// reads them as they are). For people, a Smoother reads them as the thesis
// says they must be read (§8.3: the RE is erratic from one interleaving to
// the next, the WBE steadier; §4.2.5: nothing before 32 interleavings): a
// time-weighted average of both estimators' totals, in the logarithm, over
// the most recent half of the run, with the spread of those estimates as a
// range (smooth.go).
package estimator
