/*
 * htm.h: hardware transactional memory, Intel RTM's interface as GCC's
 * <immintrin.h> gives it (-mrtm), run by the model checker.
 *
 *     unsigned status;
 *     if ((status = _xbegin()) == _XBEGIN_STARTED) {
 *             ... the transaction ...
 *             _xend();
 *     } else {
 *             ... the failure path: status says why it aborted ...
 *     }
 *
 * A transaction runs atomically, or aborts at once: _xbegin is a
 * preemption point at which Landslide tries both, and the abort statuses
 * the mode allows (RETRY by default; with --abort-codes, CONFLICT after
 * another thread's conflicting access, EXPLICIT from _xabort and
 * CAPACITY from a system call inside the transaction). Nested
 * transactions, and _xend or _xabort outside one, are reported as bugs.
 */
#ifndef _HTM_H
#define _HTM_H

#define _XBEGIN_STARTED  (~0u)
#define _XABORT_EXPLICIT (1 << 0)
#define _XABORT_RETRY    (1 << 1)
#define _XABORT_CONFLICT (1 << 2)
#define _XABORT_CAPACITY (1 << 3)
#define _XABORT_DEBUG    (1 << 4)
#define _XABORT_NESTED   (1 << 5)
#define _XABORT_CODE(x)  (((x) >> 24) & 0xFF)

#include <landslide_abi.h>

/* The operations are system calls to the model checker's kernel, inlined
 * (a report shows the line of the program that called them). */
static inline __attribute__((always_inline)) long _htm_call(long n, long arg)
{
	register long a0 __asm__("a0") = arg;
	register long a7 __asm__("a7") = n;
	__asm__ volatile("ecall" : "+r"(a0) : "r"(a7) : "memory");
	return a0;
}

/* Starts a transaction (_XBEGIN_STARTED) or returns why it aborted. */
static inline __attribute__((always_inline)) unsigned int _xbegin(void)
{
	return (unsigned int)_htm_call(LS_SYS_XBEGIN, 0);
}

/* Commits the transaction. */
static inline __attribute__((always_inline)) void _xend(void) { _htm_call(LS_SYS_XEND, 0); }

/* Aborts the transaction: _xbegin returns _XABORT_EXPLICIT with code. */
static inline __attribute__((always_inline)) void _xabort(unsigned int code)
{
	_htm_call(LS_SYS_XABORT, code & 0xFF);
}

/* 1 inside a transaction, 0 outside. */
static inline __attribute__((always_inline)) int _xtest(void) { return (int)_htm_call(LS_SYS_XTEST, 0); }

#endif
