/*
 * landslide_posix_abi.h: the system calls behind pthread.h and verifier.h
 * (sdk/posix/), the same contract as landslide_abi.h (kernel/abi.go holds
 * the same numbers; a test checks that they agree).
 */
#ifndef LANDSLIDE_POSIX_ABI_H
#define LANDSLIDE_POSIX_ABI_H

/* POSIX threads (pthread.h): each call is one synchronisation event,
 * preceded by a preemption point. Errors are returned as positive errno
 * values, as pthreads does. A mutex is the int at its address (0: free,
 * else its owner's tid). */
#define LS_SYS_PTHREAD_CREATE 1050 /* (pthread_t *, start, fn, arg): the thread
                                      runs start(fn, arg) on a stack of its own */
#define LS_SYS_PTHREAD_EXIT   1051 /* (retval): ends the calling thread        */
#define LS_SYS_PTHREAD_JOIN   1052 /* (tid, void **retval): waits for its exit */
#define LS_SYS_PTHREAD_DETACH 1053 /* (tid)                                    */
#define LS_SYS_MUTEX_LOCK     1054 /* (mutex *)                                */
#define LS_SYS_MUTEX_TRYLOCK  1055 /* (mutex *) -> 0 / EBUSY                   */
#define LS_SYS_MUTEX_UNLOCK   1056 /* (mutex *)                                */
#define LS_SYS_MUTEX_DESTROY  1057 /* (mutex *)                                */
#define LS_SYS_COND_WAIT      1058 /* (cond *, mutex *): releases the mutex and
                                      waits for a signal (the caller relocks)  */
#define LS_SYS_COND_TIMEDWAIT 1059 /* the same; ETIMEDOUT when no thread can run */
#define LS_SYS_COND_SIGNAL    1060 /* (cond *): wakes the lowest-tid waiter     */
#define LS_SYS_COND_BROADCAST 1061 /* (cond *): wakes every waiter             */
#define LS_SYS_ASSUME_FALSE   1062 /* (): __VERIFIER_assume(0): the thread
                                      waits for good; if no thread can run the
                                      execution ends normally                  */
#define LS_SYS_NONDET         1063 /* (lo, hi) -> a value in [lo, hi]: each one
                                      is explored (a choice of the checker);
                                      at most 4096 values                      */

#endif
