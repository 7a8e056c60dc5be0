/* thread.h: the Pebbles P2 thread-management interface. */
#ifndef _THREAD_H
#define _THREAD_H

#include <assert.h> /* as in the Pebbles basecode: assert and NULL come with it */
#include <stddef.h>
#include <mutex.h>
#include <cond.h>
#include <sem.h>
#include <rwlock.h>

/* Must be called once, before any other thr_* call, by the main thread.
 * size is the stack size of every thread created with thr_create(). */
int thr_init(unsigned int size);
/* Runs func(args) in a new thread; returns its tid or a negative error. */
int thr_create(void *(*func)(void *), void *args);
/* Waits for thread tid to exit and collects its exit status. At most one
 * thread may join a given thread. Returns 0, or a negative error. */
int thr_join(int tid, void **statusp);
/* Ends the calling thread; status goes to its joiner. */
void thr_exit(void *status) __attribute__((__noreturn__));
int thr_getid(void);
/* Defers execution to thread tid (-1: any thread). */
int thr_yield(int tid);

#endif /* _THREAD_H */
