/*
 * pthread.c: POSIX threads over the Landslide kernel's calls (pthread.h).
 * Creation, exit, join, mutexes and condition variables are system calls;
 * the rest is built on them here. Each call is a real function, so that it
 * appears in stack traces.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <syscall.h>

#include "posix_syscall.h"

/* A new thread starts here: fn's result is its exit value. */
static void __attribute__((__noreturn__)) ls_pthread_start(void *(*fn)(void *), void *arg)
{
	pthread_exit(fn(arg));
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
	int r = (int)ls_syscall4(LS_SYS_PTHREAD_CREATE, (long)thread, (long)ls_pthread_start, (long)start, (long)arg);
	if (r == 0 && attr != NULL && attr->__detached)
		r = pthread_detach(*thread);
	return r;
}

/* The C++ runtime's (sdk/cxxrt): the exiting thread's thread_local
   destructors; undefined, so null, in a C program. */
extern void ls_cxx_thread_exit(void) __attribute__((weak));

void pthread_exit(void *retval)
{
	if (ls_cxx_thread_exit)
		ls_cxx_thread_exit();
	for (;;)
		ls_syscall1(LS_SYS_PTHREAD_EXIT, (long)retval);
}

int pthread_join(pthread_t thread, void **retval)
{
	return (int)ls_syscall2(LS_SYS_PTHREAD_JOIN, (long)thread, (long)retval);
}

int pthread_detach(pthread_t thread) { return (int)ls_syscall1(LS_SYS_PTHREAD_DETACH, (long)thread); }

pthread_t pthread_self(void) { return (pthread_t)gettid(); }

int pthread_equal(pthread_t a, pthread_t b) { return a == b; }

int sched_yield(void)
{
	yield(-1);
	return 0;
}

int pthread_attr_init(pthread_attr_t *attr)
{
	attr->__detached = PTHREAD_CREATE_JOINABLE;
	return 0;
}

int pthread_attr_destroy(pthread_attr_t *attr)
{
	(void)attr;
	return 0;
}

int pthread_attr_setdetachstate(pthread_attr_t *attr, int state)
{
	if (state != PTHREAD_CREATE_JOINABLE && state != PTHREAD_CREATE_DETACHED)
		return EINVAL;
	attr->__detached = state;
	return 0;
}

int pthread_attr_getdetachstate(const pthread_attr_t *attr, int *state)
{
	*state = attr->__detached;
	return 0;
}

int pthread_attr_setstacksize(pthread_attr_t *attr, size_t size)
{
	(void)attr;
	(void)size; /* every thread gets the kernel's stack */
	return 0;
}

/* --- mutexes: the kernel owns them --- */

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	m->__owner = 0;
	m->__kind = attr != NULL ? attr->__kind : 0;
	return 0;
}

int pthread_mutex_destroy(pthread_mutex_t *m) { return (int)ls_syscall1(LS_SYS_MUTEX_DESTROY, (long)m); }

int pthread_mutex_lock(pthread_mutex_t *m) { return (int)ls_syscall1(LS_SYS_MUTEX_LOCK, (long)m); }

int pthread_mutex_trylock(pthread_mutex_t *m) { return (int)ls_syscall1(LS_SYS_MUTEX_TRYLOCK, (long)m); }

int pthread_mutex_unlock(pthread_mutex_t *m) { return (int)ls_syscall1(LS_SYS_MUTEX_UNLOCK, (long)m); }

int pthread_mutexattr_init(pthread_mutexattr_t *attr)
{
	attr->__kind = 0;
	return 0;
}

int pthread_mutexattr_destroy(pthread_mutexattr_t *attr)
{
	(void)attr;
	return 0;
}

int pthread_mutexattr_settype(pthread_mutexattr_t *attr, int type)
{
	attr->__kind = type;
	return 0;
}

/* --- condition variables --- */

int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
	(void)attr;
	c->__seq = 0;
	return 0;
}

int pthread_cond_destroy(pthread_cond_t *c)
{
	(void)c;
	return 0;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	int r = (int)ls_syscall2(LS_SYS_COND_WAIT, (long)c, (long)m);
	pthread_mutex_lock(m);
	return r;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
	(void)abstime;
	int r = (int)ls_syscall2(LS_SYS_COND_TIMEDWAIT, (long)c, (long)m);
	pthread_mutex_lock(m);
	return r;
}

int pthread_cond_signal(pthread_cond_t *c) { return (int)ls_syscall1(LS_SYS_COND_SIGNAL, (long)c); }

int pthread_cond_broadcast(pthread_cond_t *c) { return (int)ls_syscall1(LS_SYS_COND_BROADCAST, (long)c); }

/* --- read-write locks: writers preferred once waiting --- */

int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *attr)
{
	(void)attr;
	pthread_mutex_init(&l->__m, NULL);
	pthread_cond_init(&l->__c, NULL);
	l->__readers = l->__writer = l->__waiting_writers = 0;
	return 0;
}

int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
	if (l->__readers != 0 || l->__writer != 0)
		return EBUSY;
	return 0;
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	pthread_mutex_lock(&l->__m);
	while (l->__writer || l->__waiting_writers)
		pthread_cond_wait(&l->__c, &l->__m);
	l->__readers++;
	pthread_mutex_unlock(&l->__m);
	return 0;
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	int r = EBUSY;
	pthread_mutex_lock(&l->__m);
	if (!l->__writer && !l->__waiting_writers) {
		l->__readers++;
		r = 0;
	}
	pthread_mutex_unlock(&l->__m);
	return r;
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	pthread_mutex_lock(&l->__m);
	l->__waiting_writers++;
	while (l->__writer || l->__readers)
		pthread_cond_wait(&l->__c, &l->__m);
	l->__waiting_writers--;
	l->__writer = 1;
	pthread_mutex_unlock(&l->__m);
	return 0;
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	int r = EBUSY;
	pthread_mutex_lock(&l->__m);
	if (!l->__writer && !l->__readers) {
		l->__writer = 1;
		r = 0;
	}
	pthread_mutex_unlock(&l->__m);
	return r;
}

int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	pthread_mutex_lock(&l->__m);
	if (l->__writer)
		l->__writer = 0;
	else if (l->__readers > 0)
		l->__readers--;
	else {
		pthread_mutex_unlock(&l->__m);
		return EINVAL;
	}
	pthread_cond_broadcast(&l->__c);
	pthread_mutex_unlock(&l->__m);
	return 0;
}

/* --- barriers --- */

int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count)
{
	(void)attr;
	if (count == 0)
		return EINVAL;
	pthread_mutex_init(&b->__m, NULL);
	pthread_cond_init(&b->__c, NULL);
	b->__count = count;
	b->__arrived = b->__cycle = 0;
	return 0;
}

int pthread_barrier_destroy(pthread_barrier_t *b)
{
	(void)b;
	return 0;
}

int pthread_barrier_wait(pthread_barrier_t *b)
{
	pthread_mutex_lock(&b->__m);
	unsigned cycle = b->__cycle;
	if (++b->__arrived == b->__count) {
		b->__arrived = 0;
		b->__cycle++;
		pthread_cond_broadcast(&b->__c);
		pthread_mutex_unlock(&b->__m);
		return PTHREAD_BARRIER_SERIAL_THREAD;
	}
	while (cycle == b->__cycle)
		pthread_cond_wait(&b->__c, &b->__m);
	pthread_mutex_unlock(&b->__m);
	return 0;
}

/* --- once --- */

int pthread_once(pthread_once_t *once, void (*init)(void))
{
	pthread_mutex_lock(&once->__m);
	if (!once->__done) {
		init();
		once->__done = 1;
	}
	pthread_mutex_unlock(&once->__m);
	return 0;
}

/* --- spinlocks: a mutex (a thread that would spin waits instead) --- */

int pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
	(void)pshared;
	return pthread_mutex_init(s, NULL);
}

int pthread_spin_destroy(pthread_spinlock_t *s) { return pthread_mutex_destroy(s); }

int pthread_spin_lock(pthread_spinlock_t *s) { return pthread_mutex_lock(s); }

int pthread_spin_trylock(pthread_spinlock_t *s) { return pthread_mutex_trylock(s); }

int pthread_spin_unlock(pthread_spinlock_t *s) { return pthread_mutex_unlock(s); }

/* --- thread-specific data: one slot per (thread, key); threads touch
 * only their own row, so the table adds no conflicts --- */

#define LS_TSD_THREADS 64

static void *ls_tsd[LS_TSD_THREADS][PTHREAD_KEYS_MAX];
static unsigned ls_tsd_keys;

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *))
{
	(void)destructor; /* destructors do not run */
	unsigned k = __atomic_fetch_add(&ls_tsd_keys, 1, __ATOMIC_SEQ_CST);
	if (k >= PTHREAD_KEYS_MAX)
		return EAGAIN;
	*key = k;
	return 0;
}

int pthread_key_delete(pthread_key_t key)
{
	(void)key;
	return 0;
}

void *pthread_getspecific(pthread_key_t key)
{
	if (key >= PTHREAD_KEYS_MAX)
		return NULL;
	return ls_tsd[(unsigned)gettid() % LS_TSD_THREADS][key];
}

int pthread_setspecific(pthread_key_t key, const void *value)
{
	if (key >= PTHREAD_KEYS_MAX)
		return EINVAL;
	ls_tsd[(unsigned)gettid() % LS_TSD_THREADS][key] = (void *)value;
	return 0;
}
