/*
 * sem_type.h: the layout of sem_t used by the SDK's reference thread
 * library (see mutex_type.h about replacing it).
 */
#ifndef _SEM_TYPE_H
#define _SEM_TYPE_H

#include <mutex_type.h>
#include <cond_type.h>

typedef struct sem {
	mutex_t lock;
	cond_t nonzero; /* signalled when count becomes positive */
	int count;
} sem_t;

#endif /* _SEM_TYPE_H */
