/* verifier.c: the SV-COMP conventions (verifier.h). */
#include <assert.h>
#include <pthread.h>
#include <verifier.h>

#include "posix_syscall.h"

void reach_error(void) { panic("reach_error() reached"); }

void __VERIFIER_error(void) { panic("__VERIFIER_error() reached"); }

void __VERIFIER_assume(int cond)
{
	if (!cond)
		ls_syscall0(LS_SYS_ASSUME_FALSE);
}

static pthread_mutex_t ls_verifier_atomic = PTHREAD_MUTEX_INITIALIZER;

void __VERIFIER_atomic_begin(void) { pthread_mutex_lock(&ls_verifier_atomic); }

void __VERIFIER_atomic_end(void) { pthread_mutex_unlock(&ls_verifier_atomic); }
