/*
 * stdatomic.h (Landslide guest SDK): C11 atomics, from the compiler's own
 * header, with the least- and fast-width integer types it needs (the
 * SDK's stdint.h has only the exact-width ones). Every atomic operation
 * is sequentially consistent in Landslide: the guest is a single-issue
 * RV64 hart and the explorer interleaves whole instructions, so
 * memory_order_relaxed, acquire and release behave as seq_cst (a program
 * correct only under a weaker order is checked under the stronger one).
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

#endif /* _LANDSLIDE_STDATOMIC_H */
