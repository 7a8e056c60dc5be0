/*
 * pthread.h (Landslide guest SDK): POSIX threads. Creation, exit, join,
 * mutexes and condition variables are system calls of the Landslide
 * kernel, so each is one synchronisation event of the model (a
 * preemption point before it), not the shared accesses of a library.
 * Read-write locks, barriers, once, spinlocks and thread-specific data
 * are built on them in sdk/lib/pthread.c.
 *
 * Semantics: sequential consistency. A timed wait never times out while
 * another thread can run; it returns ETIMEDOUT when no thread can (rather
 * than deadlock). pthread_cond_signal wakes the waiter with the lowest
 * thread id. Calls POSIX leaves undefined (unlocking a mutex the thread
 * does not hold, destroying a locked mutex, relocking a held one, joining
 * a thread twice or a detached one) are reported as bugs.
 */
#ifndef _PTHREAD_H
#define _PTHREAD_H

#include <stddef.h>
#include <sched.h>

#ifndef EBUSY
#define EBUSY 16
#endif
#ifndef EAGAIN
#define EAGAIN 11
#endif
#ifndef EINVAL
#define EINVAL 22
#endif
#ifndef EDEADLK
#define EDEADLK 35
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT 110
#endif

typedef unsigned long pthread_t;
typedef struct { int __detached; } pthread_attr_t;

/* The owner's thread id, 0 when free: the kernel reads and writes it. */
typedef struct { int __owner; int __kind; } pthread_mutex_t;
typedef struct { int __kind; } pthread_mutexattr_t;
#define PTHREAD_MUTEX_INITIALIZER { 0, 0 }
#define PTHREAD_MUTEX_NORMAL 0
#define PTHREAD_MUTEX_DEFAULT 0
#define PTHREAD_MUTEX_ERRORCHECK 2

typedef struct { int __seq; } pthread_cond_t;
typedef struct { int __unused; } pthread_condattr_t;
#define PTHREAD_COND_INITIALIZER { 0 }

typedef struct {
	pthread_mutex_t __m;
	pthread_cond_t __c;
	int __readers, __writer, __waiting_writers;
} pthread_rwlock_t;
typedef struct { int __unused; } pthread_rwlockattr_t;
#define PTHREAD_RWLOCK_INITIALIZER { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 }

typedef struct {
	pthread_mutex_t __m;
	pthread_cond_t __c;
	unsigned __count, __arrived, __cycle;
} pthread_barrier_t;
typedef struct { int __unused; } pthread_barrierattr_t;
#define PTHREAD_BARRIER_SERIAL_THREAD (-1)

typedef struct { int __done; pthread_mutex_t __m; } pthread_once_t;
#define PTHREAD_ONCE_INIT { 0, PTHREAD_MUTEX_INITIALIZER }

typedef pthread_mutex_t pthread_spinlock_t;
#define PTHREAD_PROCESS_PRIVATE 0
#define PTHREAD_PROCESS_SHARED 1

typedef unsigned pthread_key_t;
#define PTHREAD_KEYS_MAX 32

#define PTHREAD_CREATE_JOINABLE 0
#define PTHREAD_CREATE_DETACHED 1

struct timespec;

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg);
void pthread_exit(void *retval) __attribute__((__noreturn__));
int pthread_join(pthread_t thread, void **retval);
int pthread_detach(pthread_t thread);
pthread_t pthread_self(void);
int pthread_equal(pthread_t a, pthread_t b);

int pthread_attr_init(pthread_attr_t *attr);
int pthread_attr_destroy(pthread_attr_t *attr);
int pthread_attr_setdetachstate(pthread_attr_t *attr, int state);
int pthread_attr_getdetachstate(const pthread_attr_t *attr, int *state);
int pthread_attr_setstacksize(pthread_attr_t *attr, size_t size);

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr);
int pthread_mutex_destroy(pthread_mutex_t *m);
int pthread_mutex_lock(pthread_mutex_t *m);
int pthread_mutex_trylock(pthread_mutex_t *m);
int pthread_mutex_unlock(pthread_mutex_t *m);
int pthread_mutexattr_init(pthread_mutexattr_t *attr);
int pthread_mutexattr_destroy(pthread_mutexattr_t *attr);
int pthread_mutexattr_settype(pthread_mutexattr_t *attr, int type);

int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr);
int pthread_cond_destroy(pthread_cond_t *c);
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime);
int pthread_cond_signal(pthread_cond_t *c);
int pthread_cond_broadcast(pthread_cond_t *c);

int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *attr);
int pthread_rwlock_destroy(pthread_rwlock_t *l);
int pthread_rwlock_rdlock(pthread_rwlock_t *l);
int pthread_rwlock_wrlock(pthread_rwlock_t *l);
int pthread_rwlock_tryrdlock(pthread_rwlock_t *l);
int pthread_rwlock_trywrlock(pthread_rwlock_t *l);
int pthread_rwlock_unlock(pthread_rwlock_t *l);

int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count);
int pthread_barrier_destroy(pthread_barrier_t *b);
int pthread_barrier_wait(pthread_barrier_t *b);

int pthread_once(pthread_once_t *once, void (*init)(void));

int pthread_spin_init(pthread_spinlock_t *s, int pshared);
int pthread_spin_destroy(pthread_spinlock_t *s);
int pthread_spin_lock(pthread_spinlock_t *s);
int pthread_spin_trylock(pthread_spinlock_t *s);
int pthread_spin_unlock(pthread_spinlock_t *s);

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *));
int pthread_key_delete(pthread_key_t key);
void *pthread_getspecific(pthread_key_t key);
int pthread_setspecific(pthread_key_t key, const void *value);

#endif /* _PTHREAD_H */
