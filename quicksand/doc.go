// Package quicksand owns Iterative Deepening (thesis ch. 4; the Quicksand
// paper, OOPSLA'16): many state spaces of one program, each a set of
// preemption points ("job"), explored under one budget, new ones added
// from data races, the ones whose ETA will not fit suspended.
//
//   - ppset.go: the PP registry (sync PPs and data-race PPs, with the
//     source's priority codes and explored/deterministic flags) and PP
//     sets as bitsets.
//   - sched.go: Sched, the job table and the paper's algorithms as plain
//     data and pure decisions: the seeds (§4.2.2), Algorithm 1 (-M),
//     Algorithm 2 (big and small jobs from a race, deduplicated), Algorithm
//     3 (suspend or go on, with the ETA factor, the 32-interleaving
//     threshold and the 60 s home stretch), Next (the source's get_work),
//     bug cancellation of supersets, the lifecycle, total verification.
//     It takes the clock as an argument, so tests script ETAs and time.
//   - run.go: Run, the worker pool (-c) around a Sched, the wall clock or
//     the deterministic interleaving clock, and the stored form of the
//     state (Encode/Decode) that a job's commits carry, so that a resumed
//     run goes on exactly.
//
// Jobs run through a Runner: this package never builds machines (the
// command line's runner explores each job with package job, and keeps
// suspended jobs in the store).
package quicksand
