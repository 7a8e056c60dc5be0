// Package check runs whole checks of a program for any caller: the CLI,
// the benchmark and evaluation commands, tests. It is the library floor
// under the CLI:
//
//   - Explore explores one state space (one job) and ResumeExplore
//     continues a stored one;
//   - Quicksand runs Iterative Deepening over PP sets (many jobs, parked
//     or resumed from the store) and ResumeQuicksand continues a stored
//     run;
//   - Execute runs a single execution, Replay re-executes a stored trace,
//     Races re-analyses a run's stored interleavings.
//
// Each takes a context: canceling it stops the check at its next
// interleaving with everything committed (Verdict Interrupted). A
// Recording says whether and how the check is kept in a store: the new
// run, its commits and its final state are made here, never by callers.
// Results are typed, with a Verdict that decides the exit code; rendering
// (text, JSON, HTML) belongs to the caller.
//
// The package re-exports the few types and constants of the layers below
// that a caller names (the job spec, PP requests, HB modes, strategies),
// so that a front end depends on this package, not on the whole house.
package check
