/*
 * malloc_internal.h: the raw heap allocator (Pebbles P2). A P2 thread library
 * may wrap these in its own thread-safe malloc()/free(); under Landslide they
 * are kernel intrinsics and already atomic.
 */
#ifndef _MALLOC_INTERNAL_H
#define _MALLOC_INTERNAL_H

#include <stddef.h>

void *_malloc(size_t size);
void *_calloc(size_t nelt, size_t eltsize);
void *_realloc(void *buf, size_t new_size);
void _free(void *buf);

#endif /* _MALLOC_INTERNAL_H */
