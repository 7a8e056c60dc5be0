/*
 * await.h: declare what a spin loop waits for (CODEX's RequireResult, in
 * van den Hooff's CB-DPOR thesis, §4.1).
 *
 *     while (atomic_load(&lock->held) != 0)   // may spin forever when the
 *             ;                               // checker never preempts it
 *
 *     await_eq(&lock->held, 0);               // the thread cannot run until
 *                                             // lock->held == 0
 *
 * A model checker that preempts threads only where it must (CB-DPOR,
 * CHESS, PCT) would run a spin loop forever: await_eq(p, v) instead makes
 * the thread not runnable while *p != v, so waiting is blocking, and a
 * state where every thread waits is reported as a deadlock. It reads *p
 * (1, 2, 4 or 8 bytes) once it may go on. Keep the loop around it: the
 * value may change again before the thread's next step.
 *
 *     for (;;) {
 *             await_eq(&lock->held, 0);
 *             if (atomic_compare_exchange_strong(&lock->held, &zero, 1))
 *                     break;
 *     }
 *
 * Outside Landslide await_eq returns at once (the loop spins).
 */
#ifndef _AWAIT_H
#define _AWAIT_H

#include <landslide_abi.h>

/* A macro, not an inline function, so that a report shows the line of the
 * program that waits. */
#define await_eq(p, v)                                                          \
	({                                                                      \
		register long _a0 __asm__("a0") = (long)(p);                    \
		register long _a1 __asm__("a1") = (long)sizeof(*(p));           \
		register long _a2 __asm__("a2") = (long)(v);                    \
		register long _a7 __asm__("a7") = LS_SYS_AWAIT;                 \
		__asm__ volatile("ecall"                                        \
				 : "+r"(_a0)                                    \
				 : "r"(_a1), "r"(_a2), "r"(_a7)                 \
				 : "memory");                                   \
		(void)0;                                                        \
	})

#endif
