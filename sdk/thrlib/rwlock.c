/*
 * rwlock.c: readers/writers locks for the reference thread library.
 *
 * Neither side starves. An arriving reader waits if a writer holds the lock
 * or is waiting for it; a releasing writer lets every waiting reader in at
 * once (a "batch") before the next writer. Hand-offs are explicit: the
 * releasing thread updates nreaders/writer on behalf of the threads it
 * wakes, so a woken thread never has to compete again:
 *   - readers wait for read_gen to change (admit_readers counted them in);
 *   - a writer waits for write_grant (grant_writer already set writer).
 * rwlock_downgrade turns the caller's write lock into a read lock and
 * admits the waiting readers with it; waiting writers keep waiting.
 * Every field is protected by rw->lock.
 */
#include <rwlock.h>
#include <cond.h>
#include <mutex.h>
#include <stdlib.h>

#include "thr_internals.h"

THR_API int rwlock_init(rwlock_t *rw)
{
	mutex_init(&rw->lock);
	cond_init(&rw->readers);
	cond_init(&rw->writers);
	rw->nreaders = 0;
	rw->writer = 0;
	rw->waiting_readers = 0;
	rw->waiting_writers = 0;
	rw->write_grant = 0;
	rw->read_gen = 0;
	return 0;
}

THR_API void rwlock_destroy(rwlock_t *rw)
{
	if (rw->writer || rw->nreaders != 0 || rw->waiting_readers != 0 || rw->waiting_writers != 0)
		panic("rwlock_destroy(%p): the lock is in use", (void *)rw);
	cond_destroy(&rw->readers);
	cond_destroy(&rw->writers);
	mutex_destroy(&rw->lock);
}

/* Lets every waiting reader in. Called with rw->lock held. */
static void admit_readers(rwlock_t *rw)
{
	rw->nreaders += rw->waiting_readers;
	rw->waiting_readers = 0;
	rw->read_gen++;
	cond_broadcast(&rw->readers);
}

/* Hands the (free) lock to one waiting writer. Called with rw->lock held. */
static void grant_writer(rwlock_t *rw)
{
	rw->writer = 1;
	rw->waiting_writers--;
	rw->write_grant = 1;
	cond_signal(&rw->writers);
}

THR_API void rwlock_lock(rwlock_t *rw, int type)
{
	mutex_lock(&rw->lock);
	if (type == RWLOCK_READ) {
		if (!rw->writer && rw->waiting_writers == 0) {
			rw->nreaders++;
		} else {
			unsigned int gen = rw->read_gen;
			rw->waiting_readers++;
			while (rw->read_gen == gen)
				cond_wait(&rw->readers, &rw->lock);
			/* admit_readers() has counted us in nreaders. */
		}
	} else if (type == RWLOCK_WRITE) {
		if (!rw->writer && rw->nreaders == 0 && rw->waiting_writers == 0) {
			rw->writer = 1;
		} else {
			rw->waiting_writers++;
			while (!rw->write_grant)
				cond_wait(&rw->writers, &rw->lock);
			rw->write_grant = 0; /* grant_writer() has set writer for us. */
		}
	} else {
		panic("rwlock_lock(%p): bad type %d", (void *)rw, type);
	}
	mutex_unlock(&rw->lock);
}

THR_API void rwlock_unlock(rwlock_t *rw)
{
	mutex_lock(&rw->lock);
	if (rw->writer) {
		rw->writer = 0;
		if (rw->waiting_readers > 0)
			admit_readers(rw);
		else if (rw->waiting_writers > 0)
			grant_writer(rw);
	} else if (rw->nreaders > 0) {
		rw->nreaders--;
		if (rw->nreaders == 0 && rw->waiting_writers > 0)
			grant_writer(rw);
	} else {
		panic("rwlock_unlock(%p): the lock is not held", (void *)rw);
	}
	mutex_unlock(&rw->lock);
}

THR_API void rwlock_downgrade(rwlock_t *rw)
{
	mutex_lock(&rw->lock);
	if (!rw->writer)
		panic("rwlock_downgrade(%p): the lock is not held for writing", (void *)rw);
	rw->writer = 0;
	rw->nreaders = 1;
	if (rw->waiting_readers > 0)
		admit_readers(rw);
	mutex_unlock(&rw->lock);
}
