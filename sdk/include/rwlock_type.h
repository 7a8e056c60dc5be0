/*
 * rwlock_type.h: the layout of rwlock_t used by the SDK's reference thread
 * library (see mutex_type.h about replacing it).
 */
#ifndef _RWLOCK_TYPE_H
#define _RWLOCK_TYPE_H

#include <mutex_type.h>
#include <cond_type.h>

typedef struct rwlock {
	mutex_t lock;          /* protects every field below */
	cond_t readers;        /* waiting readers: wait for read_gen to change */
	cond_t writers;        /* waiting writers: wait for write_grant */
	int nreaders;          /* readers holding the lock */
	int writer;            /* 1 if a writer holds (or was granted) the lock */
	int waiting_readers;   /* readers waiting for the next read batch */
	int waiting_writers;   /* writers waiting for a grant */
	int write_grant;       /* 1: a waiting writer has been handed the lock */
	unsigned int read_gen; /* bumped each time a batch of readers is let in */
} rwlock_t;

#endif /* _RWLOCK_TYPE_H */
