/*
 * mutex.c: mutexes for the reference thread library.
 *
 * The lock word is taken with an atomic exchange (amoswap). A thread that
 * finds it taken yields to the holder (or to anyone, if the holder cannot
 * run) and tries again: it never spins without yielding. owner is only a
 * hint for that yield and for debugging. Every access to the two words
 * outside init and destroy is a C11 atomic (acquire loads, release stores),
 * so the library has no data race of its own for a checker to report.
 */
#include <mutex.h>
#include <stdlib.h>
#include <syscall.h>

#include "thr_internals.h"

THR_API int mutex_init(mutex_t *mp)
{
	mp->locked = 0;
	mp->owner = -1;
	return 0;
}

THR_API void mutex_destroy(mutex_t *mp)
{
	if (mp->locked)
		panic("mutex_destroy(%p): the mutex is locked", (void *)mp);
	mp->owner = -1;
}

THR_API void mutex_lock(mutex_t *mp)
{
	while (__atomic_exchange_n(&mp->locked, 1, __ATOMIC_ACQUIRE) != 0) {
		int owner = __atomic_load_n(&mp->owner, __ATOMIC_ACQUIRE);
		if (owner < 0 || yield(owner) < 0)
			yield(-1);
	}
	__atomic_store_n(&mp->owner, gettid(), __ATOMIC_RELEASE);
}

THR_API void mutex_unlock(mutex_t *mp)
{
	if (!__atomic_load_n(&mp->locked, __ATOMIC_ACQUIRE))
		panic("mutex_unlock(%p): the mutex is not locked", (void *)mp);
	__atomic_store_n(&mp->owner, -1, __ATOMIC_RELEASE);
	__atomic_store_n(&mp->locked, 0, __ATOMIC_RELEASE);
}
