/*
 * atomic.h: atomic read-modify-write on ints (the PSU P2 "libatomic"
 * interface). Each returns the value *p held before the operation. The SDK's
 * versions are weak: a thread library may supply its own.
 */
#ifndef _ATOMIC_H
#define _ATOMIC_H

/* If *p == expected, store desired. Returns the old *p either way. */
int atomic_compare_swap(volatile int *p, int expected, int desired);
/* Stores v, returns the old *p. */
int atomic_exchange(volatile int *p, int v);
/* Adds v, returns the old *p. */
int atomic_fetch_add(volatile int *p, int v);
/* Subtracts v, returns the old *p. */
int atomic_fetch_sub(volatile int *p, int v);

#endif /* _ATOMIC_H */
