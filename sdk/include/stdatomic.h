/*
 * stdatomic.h (Landslide guest SDK): C11 atomics, from the compiler's own
 * header, with the least- and fast-width integer types it needs (the
 * SDK's stdint.h has only the exact-width ones).
 *
 * Every atomic operation runs sequentially consistently in Landslide: the
 * guest is a single-issue RV64 hart and the explorer interleaves whole
 * instructions (a program correct only under a weaker order is checked
 * under the stronger one). The orders still matter to the race analysis,
 * which follows C11's happens-before: release/acquire pairs order what
 * comes before and after them, relaxed atomics order nothing.
 *
 * A relaxed load or store compiles to a plain one on RISC-V, which the
 * checker could not tell from a non-atomic access (a race). So
 * atomic_load_explicit and atomic_store_explicit with memory_order_relaxed
 * make the access in inline assembly followed by "fence i,i", a no-op on
 * every RISC-V implementation that compilers never emit for C11, which
 * marks it as a relaxed atomic (emu/cpu's RelaxedMarker). The __atomic
 * builtins with __ATOMIC_RELAXED have no such mark.
 */
#ifndef _LANDSLIDE_STDATOMIC_H
#define _LANDSLIDE_STDATOMIC_H

#include <stdint.h>

typedef int8_t int_least8_t;
typedef int16_t int_least16_t;
typedef int32_t int_least32_t;
typedef int64_t int_least64_t;
typedef uint8_t uint_least8_t;
typedef uint16_t uint_least16_t;
typedef uint32_t uint_least32_t;
typedef uint64_t uint_least64_t;
typedef int8_t int_fast8_t;
typedef long int_fast16_t;
typedef long int_fast32_t;
typedef long int_fast64_t;
typedef uint8_t uint_fast8_t;
typedef unsigned long uint_fast16_t;
typedef unsigned long uint_fast32_t;
typedef unsigned long uint_fast64_t;

#include_next <stdatomic.h>

/* The relaxed load and store of 1, 2, 4 or 8 bytes, marked (see above). */
static __inline__ __attribute__((__always_inline__)) int __ls_relaxed_size(unsigned long n)
{
	return n == 1 || n == 2 || n == 4 || n == 8;
}

static __inline__ __attribute__((__always_inline__)) void __ls_relaxed_load(const volatile void *p, void *out,
									  unsigned long n)
{
	unsigned long v = 0;
	switch (n) {
	case 1:
		__asm__ __volatile__("lbu %0, 0(%1)\n\tfence i, i" : "=r"(v) : "r"(p) : "memory");
		break;
	case 2:
		__asm__ __volatile__("lhu %0, 0(%1)\n\tfence i, i" : "=r"(v) : "r"(p) : "memory");
		break;
	case 4:
		__asm__ __volatile__("lwu %0, 0(%1)\n\tfence i, i" : "=r"(v) : "r"(p) : "memory");
		break;
	default:
		__asm__ __volatile__("ld %0, 0(%1)\n\tfence i, i" : "=r"(v) : "r"(p) : "memory");
		break;
	}
	__builtin_memcpy(out, &v, n);
}

static __inline__ __attribute__((__always_inline__)) void __ls_relaxed_store(volatile void *p, const void *in,
									   unsigned long n)
{
	unsigned long v = 0;
	__builtin_memcpy(&v, in, n);
	switch (n) {
	case 1:
		__asm__ __volatile__("sb %0, 0(%1)\n\tfence i, i" : : "r"(v), "r"(p) : "memory");
		break;
	case 2:
		__asm__ __volatile__("sh %0, 0(%1)\n\tfence i, i" : : "r"(v), "r"(p) : "memory");
		break;
	case 4:
		__asm__ __volatile__("sw %0, 0(%1)\n\tfence i, i" : : "r"(v), "r"(p) : "memory");
		break;
	default:
		__asm__ __volatile__("sd %0, 0(%1)\n\tfence i, i" : : "r"(v), "r"(p) : "memory");
		break;
	}
}

#undef atomic_load_explicit
#define atomic_load_explicit(obj, order)                                                   \
	__extension__({                                                                    \
		__auto_type __ls_obj = (obj);                                              \
		__typeof__(__c11_atomic_load(__ls_obj, __ATOMIC_RELAXED)) __ls_val;         \
		if ((order) == __ATOMIC_RELAXED && __ls_relaxed_size(sizeof(__ls_val)))    \
			__ls_relaxed_load(__ls_obj, &__ls_val, sizeof(__ls_val));           \
		else                                                                       \
			__ls_val = __c11_atomic_load(__ls_obj, (order));                   \
		__ls_val;                                                                  \
	})

#undef atomic_store_explicit
#define atomic_store_explicit(obj, val, order)                                             \
	__extension__({                                                                    \
		__auto_type __ls_obj = (obj);                                              \
		__typeof__(__c11_atomic_load(__ls_obj, __ATOMIC_RELAXED)) __ls_val = (val); \
		if ((order) == __ATOMIC_RELAXED && __ls_relaxed_size(sizeof(__ls_val)))    \
			__ls_relaxed_store(__ls_obj, &__ls_val, sizeof(__ls_val));          \
		else                                                                       \
			__c11_atomic_store(__ls_obj, __ls_val, (order));                   \
		(void)0;                                                                   \
	})

#endif /* _LANDSLIDE_STDATOMIC_H */
