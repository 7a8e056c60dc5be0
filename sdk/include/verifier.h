/*
 * verifier.h (Landslide guest SDK): the SV-COMP conventions.
 *
 * reach_error() and __VERIFIER_error() fail the execution (a bug);
 * __VERIFIER_assume(c) with c false blocks the calling thread for good
 * (the path is infeasible: if no thread can run any more the execution
 * ends normally); __VERIFIER_atomic_begin/end bracket a section that no
 * other atomic section interleaves with (one global mutex).
 *
 * Under SV-COMP's conventions (landslide explore --svcomp, suite --svcomp)
 * entering reach_error() or __VERIFIER_error() is the bug whatever their
 * body; abort(), a failed assert of glibc's and a failed assume end the
 * program without one; a deadlock is no bug; a section, and every
 * function named __VERIFIER_atomic_*, runs as one step; and a
 * condition wait may wake spuriously (kernel/svcomp.go).
 *
 * __VERIFIER_nondet_T() returns a value of a small declared domain, and
 * the checker explores every one of them (each is a choice, like the
 * choice of thread: a report or replay shows and repeats it). The
 * domain is [LANDSLIDE_NONDET_MIN, LANDSLIDE_NONDET_MAX], 0 and 1 unless
 * the build defines them (landslide cc --cflag=-DLANDSLIDE_NONDET_MAX=3),
 * cut to the type's range; _bool's is {0, 1}. __VERIFIER_nondet_range(lo,
 * hi) (a Landslide extension) returns one of [lo, hi]. A domain holds at
 * most 4096 values. The library's definitions are weak: a program may
 * define its own (reach_error often is).
 */
#ifndef _VERIFIER_H
#define _VERIFIER_H

void reach_error(void) __attribute__((__noreturn__));
void __VERIFIER_error(void) __attribute__((__noreturn__));
void __VERIFIER_assume(int cond);
void __VERIFIER_atomic_begin(void);
void __VERIFIER_atomic_end(void);

_Bool __VERIFIER_nondet_bool(void);
char __VERIFIER_nondet_char(void);
unsigned char __VERIFIER_nondet_uchar(void);
short __VERIFIER_nondet_short(void);
unsigned short __VERIFIER_nondet_ushort(void);
int __VERIFIER_nondet_int(void);
unsigned int __VERIFIER_nondet_uint(void);
long __VERIFIER_nondet_long(void);
unsigned long __VERIFIER_nondet_ulong(void);
long __VERIFIER_nondet_range(long lo, long hi);

#endif /* _VERIFIER_H */
