/*
 * sem.c: counting semaphores for the reference thread library, over a mutex
 * and a condition variable. sem_wait re-checks the count after every wakeup
 * ("while", not "if"): another thread may take the count first.
 */
#include <sem.h>
#include <cond.h>
#include <mutex.h>
#include <stdlib.h>

#include "thr_internals.h"

THR_API int sem_init(sem_t *sem, int count)
{
	if (count < 0)
		return -1;
	mutex_init(&sem->lock);
	cond_init(&sem->nonzero);
	sem->count = count;
	return 0;
}

THR_API void sem_destroy(sem_t *sem)
{
	cond_destroy(&sem->nonzero);
	mutex_destroy(&sem->lock);
}

THR_API void sem_wait(sem_t *sem)
{
	mutex_lock(&sem->lock);
	while (sem->count <= 0)
		cond_wait(&sem->nonzero, &sem->lock);
	sem->count--;
	mutex_unlock(&sem->lock);
}

THR_API void sem_signal(sem_t *sem)
{
	mutex_lock(&sem->lock);
	sem->count++;
	cond_signal(&sem->nonzero);
	mutex_unlock(&sem->lock);
}
