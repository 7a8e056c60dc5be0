/* verifier.c: the SV-COMP conventions (verifier.h). Weak: a program may
 * define any of these itself. */
#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <verifier.h>

#include "posix_syscall.h"

#define LS_WEAK __attribute__((__weak__))

LS_WEAK void reach_error(void) { panic("reach_error() reached"); }

LS_WEAK void __VERIFIER_error(void) { panic("__VERIFIER_error() reached"); }

LS_WEAK void __VERIFIER_assume(int cond)
{
	if (!cond)
		ls_syscall0(LS_SYS_ASSUME_FALSE);
}

static pthread_mutex_t ls_verifier_atomic = PTHREAD_MUTEX_INITIALIZER;

LS_WEAK void __VERIFIER_atomic_begin(void) { pthread_mutex_lock(&ls_verifier_atomic); }

LS_WEAK void __VERIFIER_atomic_end(void) { pthread_mutex_unlock(&ls_verifier_atomic); }

#ifndef LANDSLIDE_NONDET_MIN
#define LANDSLIDE_NONDET_MIN 0
#endif
#ifndef LANDSLIDE_NONDET_MAX
#define LANDSLIDE_NONDET_MAX 1
#endif

LS_WEAK long __VERIFIER_nondet_range(long lo, long hi)
{
	return ls_syscall3(LS_SYS_NONDET, lo, hi, 0);
}

/* ls_nondet: a value of the declared domain cut to [lo, hi]. The third
 * argument tells the checker whether the domain is smaller than the
 * type's: the exploration then covers a sample of its values (no SV-COMP
 * verdict of "true" rests on it). */
static long ls_nondet(long lo, long hi)
{
	long a = LANDSLIDE_NONDET_MIN, b = LANDSLIDE_NONDET_MAX;
	if (a < lo)
		a = lo;
	if (b > hi)
		b = hi;
	if (a > b)
		a = b = lo;
	return ls_syscall3(LS_SYS_NONDET, a, b, a != lo || b != hi);
}

LS_WEAK _Bool __VERIFIER_nondet_bool(void) { return ls_nondet(0, 1); }
LS_WEAK char __VERIFIER_nondet_char(void) { return ls_nondet(CHAR_MIN, CHAR_MAX); }
LS_WEAK unsigned char __VERIFIER_nondet_uchar(void) { return ls_nondet(0, UCHAR_MAX); }
LS_WEAK short __VERIFIER_nondet_short(void) { return ls_nondet(SHRT_MIN, SHRT_MAX); }
LS_WEAK unsigned short __VERIFIER_nondet_ushort(void) { return ls_nondet(0, USHRT_MAX); }
LS_WEAK int __VERIFIER_nondet_int(void) { return ls_nondet(INT_MIN, INT_MAX); }
LS_WEAK unsigned int __VERIFIER_nondet_uint(void) { return ls_nondet(0, UINT_MAX); }
LS_WEAK long __VERIFIER_nondet_long(void) { return ls_nondet(LONG_MIN, LONG_MAX); }
LS_WEAK unsigned long __VERIFIER_nondet_ulong(void) { return ls_nondet(0, LONG_MAX); }
