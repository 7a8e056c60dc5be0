/*
 * thread.c: thread management for the reference thread library.
 *
 * Every thread made by thr_create() (and the main thread, after thr_init())
 * has a tcb on thr_list, protected by thr_lock. A child's stack and tcb come
 * from malloc() (so the checker tracks them exactly) and are freed by the
 * thread that joins it.
 *
 * Exit/join hand-off, the delicate part: an exiting thread cannot free its
 * own stack, and its joiner must not free it while the thread still runs on
 * it. thr_exit() records the status and sets exited under thr_lock, wakes
 * the joiner, releases thr_lock, and then calls thr_vanish_gone(), which
 * sets tcb->gone and vanishes without touching the stack. The joiner waits
 * for exited with a condition variable, then for gone (a short yield loop:
 * the exiting thread is runnable and has a few instructions left), and only
 * then frees the stack and the tcb.
 *
 * thr_create() holds thr_lock across the thread_create system call, so the
 * child is on thr_list, with its tid, before it can look itself up.
 */
#include <thread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <syscall.h>

#include "thr_internals.h"

static mutex_t thr_lock = MUTEX_INITIALIZER;
static tcb_t *thr_list;
static tcb_t thr_main_tcb;
static unsigned int thr_stack_size;
static int thr_inited;

/* Called with thr_lock held. */
static tcb_t *thr_find(int tid)
{
	tcb_t *t;
	for (t = thr_list; t != NULL; t = t->next) {
		if (t->tid == tid)
			return t;
	}
	return NULL;
}

/* Called with thr_lock held. */
static void thr_unlink(tcb_t *t)
{
	tcb_t **pp;
	for (pp = &thr_list; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			return;
		}
	}
}

THR_API int thr_init(unsigned int size)
{
	if (thr_inited || size == 0 || size > (1u << 30))
		return -1;
	thr_stack_size = (size + 15) & ~15u;
	mutex_init(&thr_lock);
	thr_main_tcb.next = NULL;
	thr_main_tcb.tid = gettid();
	thr_main_tcb.exited = 0;
	thr_main_tcb.joined = 0;
	thr_main_tcb.gone = 0;
	thr_main_tcb.status = NULL;
	thr_main_tcb.stack = NULL;
	thr_main_tcb.func = NULL;
	thr_main_tcb.arg = NULL;
	cond_init(&thr_main_tcb.exit_cv);
	thr_list = &thr_main_tcb;
	thr_inited = 1;
	return 0;
}

/* The first function of every thread made by thr_create(). */
static void thr_wrapper(void *p)
{
	tcb_t *t = p;
	thr_exit(t->func(t->arg));
}

THR_API int thr_create(void *(*func)(void *), void *args)
{
	size_t size;
	char *stack;
	tcb_t *t;
	int tid;

	if (!thr_inited)
		return -1;
	size = (size_t)thr_stack_size + THR_STACK_SLACK;
	t = malloc(sizeof(*t));
	if (t == NULL)
		return -1;
	stack = malloc(size);
	if (stack == NULL) {
		free(t);
		return -1;
	}
	/*
	 * The child reads its tcb under thr_lock (thr_find), so it is filled in
	 * under thr_lock too: then no lockset-based race analysis (Limited HB,
	 * which knows no create edge) sees a race in the library itself.
	 */
	mutex_lock(&thr_lock);
	t->next = NULL;
	t->tid = -1;
	t->exited = 0;
	t->joined = 0;
	t->gone = 0;
	t->status = NULL;
	t->stack = stack;
	t->func = func;
	t->arg = args;
	cond_init(&t->exit_cv);
	tid = thread_create((void *)(((uintptr_t)stack + size) & ~(uintptr_t)15), thr_wrapper, t);
	if (tid < 0) {
		mutex_unlock(&thr_lock);
		free(stack);
		free(t);
		return -1;
	}
	t->tid = tid;
	t->next = thr_list;
	thr_list = t;
	mutex_unlock(&thr_lock);
	return tid;
}

THR_API int thr_join(int tid, void **statusp)
{
	void *status;
	tcb_t *t;

	mutex_lock(&thr_lock);
	t = thr_find(tid);
	if (t == NULL || t->joined || tid == gettid()) {
		mutex_unlock(&thr_lock);
		return -1;
	}
	t->joined = 1;
	while (!t->exited)
		cond_wait(&t->exit_cv, &thr_lock);
	status = t->status;
	thr_unlink(t);
	mutex_unlock(&thr_lock);

	/* Wait until the thread has left its stack for good. */
	while (!__atomic_load_n(&t->gone, __ATOMIC_ACQUIRE)) {
		if (yield(tid) < 0)
			yield(-1);
	}
	cond_destroy(&t->exit_cv);
	if (t->stack != NULL)
		free(t->stack);
	if (t != &thr_main_tcb)
		free(t);
	if (statusp != NULL)
		*statusp = status;
	return 0;
}

THR_API void thr_exit(void *status)
{
	tcb_t *t;

	mutex_lock(&thr_lock);
	t = thr_find(gettid());
	if (t == NULL) {
		/* Not made by thr_create() (or no thr_init()): nothing to hand over. */
		mutex_unlock(&thr_lock);
		vanish();
	}
	t->status = status;
	t->exited = 1;
	cond_signal(&t->exit_cv);
	mutex_unlock(&thr_lock);
	/* From here on, the joiner frees this stack as soon as t->gone is set. */
	thr_vanish_gone(&t->gone);
}

THR_API int thr_getid(void) { return gettid(); }

THR_API int thr_yield(int tid) { return yield(tid); }

/*
 * Tells the checker that thr_create, thr_join and thr_exit are this
 * library's: with every shared access a preemption point, it runs them as
 * single events of its own instead of the code above (kernel/thrlib.go).
 * A copy of this file that changes them must drop these lines. (At the
 * end of the file, so that no line above moved.)
 */
#include <landslide.h>
LANDSLIDE_CONFIG("reference_thread_library");
