/*
 * cond_type.h: the layout of cond_t used by the SDK's reference thread
 * library (see mutex_type.h about replacing it).
 */
#ifndef _COND_TYPE_H
#define _COND_TYPE_H

#include <mutex_type.h>

/* A waiting thread; lives on the waiter's stack for the duration of the wait. */
typedef struct cond_waiter {
	struct cond_waiter *next;
	int tid;
	volatile int signaled; /* the deschedule() reject flag */
} cond_waiter_t;

typedef struct cond {
	mutex_t lock;        /* protects the queue */
	cond_waiter_t *head; /* FIFO of waiters */
	cond_waiter_t *tail;
} cond_t;

#endif /* _COND_TYPE_H */
