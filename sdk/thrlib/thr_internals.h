/*
 * thr_internals.h: private declarations of the SDK's reference thread
 * library.
 */
#ifndef _THR_INTERNALS_H
#define _THR_INTERNALS_H

#include <cond.h>

/* Marks an entry point the model checker finds by ELF symbol: it must stay
 * a real function (a preemption point sits at its first instruction). */
#define THR_API __attribute__((noinline))

/* Extra stack beyond thr_init()'s size, for the library's own frames
 * (printf buffers, the thread wrapper, thr_exit). */
#define THR_STACK_SLACK 1024

/* One thread created by thr_create() (or the main thread, after thr_init). */
typedef struct tcb {
	struct tcb *next;        /* thr_list link; under thr_lock */
	int tid;                 /* under thr_lock */
	int exited;              /* thr_exit() has run; under thr_lock */
	int joined;              /* some thread is joining it; under thr_lock */
	volatile int gone;       /* set (atomically) as the very last store before
	                            vanish: the stack is no longer in use */
	void *status;            /* thr_exit()'s argument; under thr_lock */
	void *stack;             /* malloc()ed stack, NULL for the main thread */
	void *(*func)(void *);   /* written before the thread starts */
	void *arg;
	cond_t exit_cv;          /* signalled when exited becomes 1 */
} tcb_t;

/* Stores 1 to *gone, then vanishes, touching no stack memory in between
 * (thr_asm.S). */
void thr_vanish_gone(volatile int *gone) __attribute__((__noreturn__));

#endif /* _THR_INTERNALS_H */
