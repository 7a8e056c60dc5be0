/*
 * cond.c: condition variables for the reference thread library.
 *
 * A waiter queues a node on its own stack, releases the mutex and
 * deschedules with the node's "signaled" word as deschedule()'s reject flag.
 * A signaller dequeues the node, sets signaled (after which it must not touch
 * the node: the waiter may return and reuse that stack), and calls
 * make_runnable(). The kernel checks the flag atomically with descheduling,
 * so a signal that arrives between the waiter's unlock and its deschedule
 * is not lost. A make_runnable() can arrive late, after the waiter has
 * already returned and is descheduled somewhere else (the "paraguay"
 * problem): every deschedule in this library therefore loops until its own
 * flag is set.
 */
#include <cond.h>
#include <stddef.h>
#include <stdlib.h>
#include <syscall.h>

#include "thr_internals.h"

THR_API int cond_init(cond_t *cv)
{
	mutex_init(&cv->lock);
	cv->head = NULL;
	cv->tail = NULL;
	return 0;
}

THR_API void cond_destroy(cond_t *cv)
{
	if (cv->head != NULL)
		panic("cond_destroy(%p): threads are waiting", (void *)cv);
	mutex_destroy(&cv->lock);
}

THR_API void cond_wait(cond_t *cv, mutex_t *mp)
{
	cond_waiter_t self;

	/*
	 * The node is filled in under cv->lock, which the signaller reads it
	 * under: it is shared with that thread although it is on this stack.
	 */
	mutex_lock(&cv->lock);
	self.next = NULL;
	self.tid = gettid();
	self.signaled = 0;
	if (cv->tail != NULL)
		cv->tail->next = &self;
	else
		cv->head = &self;
	cv->tail = &self;
	mutex_unlock(&cv->lock);

	mutex_unlock(mp);
	while (!__atomic_load_n(&self.signaled, __ATOMIC_ACQUIRE))
		deschedule((int *)&self.signaled);
	mutex_lock(mp);
}

THR_API void cond_signal(cond_t *cv)
{
	cond_waiter_t *w;
	int tid = 0, found = 0;

	mutex_lock(&cv->lock);
	w = cv->head;
	if (w != NULL) {
		cv->head = w->next;
		if (cv->head == NULL)
			cv->tail = NULL;
		tid = w->tid;
		found = 1;
		/* The last access to *w: the waiter may leave right after. */
		__atomic_store_n(&w->signaled, 1, __ATOMIC_RELEASE);
	}
	mutex_unlock(&cv->lock);
	if (found)
		make_runnable(tid);
}

THR_API void cond_broadcast(cond_t *cv)
{
	cond_waiter_t *w;

	mutex_lock(&cv->lock);
	w = cv->head;
	cv->head = NULL;
	cv->tail = NULL;
	mutex_unlock(&cv->lock);

	while (w != NULL) {
		cond_waiter_t *next = w->next;
		int tid = w->tid;
		/* The last access to *w: the waiter may leave right after. */
		__atomic_store_n(&w->signaled, 1, __ATOMIC_RELEASE);
		make_runnable(tid);
		w = next;
	}
}
