/*
 * atomic.c: the atomic.h operations, one RISC-V AMO (or LR/SC loop) each.
 * Weak, so that a thread library may supply its own (PSU students write
 * these in assembly).
 */
#include <atomic.h>

__attribute__((weak, noinline)) int atomic_compare_swap(volatile int *p, int expected, int desired)
{
	__atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return expected; /* updated to the old value on failure; equal to it on success */
}

__attribute__((weak, noinline)) int atomic_exchange(volatile int *p, int v)
{
	return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}

__attribute__((weak, noinline)) int atomic_fetch_add(volatile int *p, int v)
{
	return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}

__attribute__((weak, noinline)) int atomic_fetch_sub(volatile int *p, int v)
{
	return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);
}
