/*
 * lineup.h: linearizability checking of a concurrent object (Line-Up,
 * Burckhardt et al., PLDI 2010, with calls ordered by happens-before as
 * in van den Hooff's CB-DPOR thesis, MIT 2014).
 *
 * A test declares each call it makes on the shared object, with its
 * argument before and its result after:
 *
 *     lineup_call("enqueue", v);
 *     enqueue(&q, v);
 *     lineup_return(0);
 *
 *     lineup_call("dequeue", 0);
 *     lineup_return(dequeue(&q));
 *
 * `landslide explore --linearizability PROGRAM` first learns the object's
 * sequential specification: it runs the program with the calls one at a
 * time, in every order, and records each order's results. A test may
 * run a sequential implementation in those runs instead: lineup_sequential()
 * returns 1 during them. Then every interleaving it explores, and every
 * equivalent one (the same accesses, each dependency kept), must be
 * explained by some order of the calls that gives the same results and
 * puts each call after those that returned before it began there, as
 * Line-Up checks one interleaving. So a call that depends on another
 * one way must come after it where an equivalent interleaving runs it
 * after the other returned; two that depend on each other overlap and
 * go either way; two with no dependency must work in both orders.
 * Otherwise the interleaving is a bug, reported with its history: each
 * thread's calls with their arguments and results.
 *
 * Limits: LINEUP_MAX_CALLS calls in one execution, made by at most
 * LINEUP_MAX_THREADS threads; operation names of at most
 * LINEUP_MAX_NAME characters; a thread's call returns before it makes
 * another or exits. Breaking one is reported as a bug naming it.
 * Outside Landslide the calls do nothing (lineup_sequential() is 0).
 */
#ifndef _LINEUP_H
#define _LINEUP_H

#include <landslide_abi.h>

#define LINEUP_MAX_CALLS   64
#define LINEUP_MAX_THREADS 16
#define LINEUP_MAX_NAME    31

/* Macros, not inline functions, so that a report shows the line of the
 * program that makes the call. */
#define _lineup_call(n, x0, x1)                                                 \
	({                                                                      \
		register long _a0 __asm__("a0") = (long)(x0);                   \
		register long _a1 __asm__("a1") = (long)(x1);                   \
		register long _a7 __asm__("a7") = (n);                          \
		__asm__ volatile("ecall" : "+r"(_a0) : "r"(_a1), "r"(_a7) : "memory"); \
		_a0;                                                            \
	})

/* A call of operation op (a string constant) with argument arg begins. */
#define lineup_call(op, arg) ((void)_lineup_call(LS_SYS_LINEUP_CALL, (const char *)(op), (arg)))

/* The thread's call returns result. */
#define lineup_return(result) ((void)_lineup_call(LS_SYS_LINEUP_RETURN, (result), 0))

/* 1 while Landslide learns the sequential specification, else 0. */
#define lineup_sequential() (_lineup_call(LS_SYS_LINEUP_MODE, 0, 0) == 1)

#endif
