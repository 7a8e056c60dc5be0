/*
 * verifier.h (Landslide guest SDK): the SV-COMP conventions.
 *
 * reach_error() and __VERIFIER_error() fail the execution (a bug);
 * __VERIFIER_assume(c) with c false blocks the calling thread for good
 * (the path is infeasible: if no thread can run any more the execution
 * ends normally); __VERIFIER_atomic_begin/end bracket a section that no
 * other atomic section interleaves with (one global mutex).
 */
#ifndef _VERIFIER_H
#define _VERIFIER_H

void reach_error(void) __attribute__((__noreturn__));
void __VERIFIER_error(void) __attribute__((__noreturn__));
void __VERIFIER_assume(int cond);
void __VERIFIER_atomic_begin(void);
void __VERIFIER_atomic_end(void);

#endif /* _VERIFIER_H */
