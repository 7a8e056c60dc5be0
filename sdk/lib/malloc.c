/*
 * malloc.c: the heap. The guest kernel owns it (LS_SYS_MALLOC and friends),
 * so every block is tracked exactly. The public names are weak so that a
 * thread library may provide its own malloc() over _malloc().
 */
#include <stdlib.h>
#include <malloc_internal.h>

#include "ls_syscall.h"

void *_malloc(size_t size) { return (void *)ls_syscall1(LS_SYS_MALLOC, (long)size); }

void *_calloc(size_t nelt, size_t eltsize)
{
	return (void *)ls_syscall2(LS_SYS_CALLOC, (long)nelt, (long)eltsize);
}

void *_realloc(void *buf, size_t new_size)
{
	return (void *)ls_syscall2(LS_SYS_REALLOC, (long)buf, (long)new_size);
}

void _free(void *buf) { ls_syscall1(LS_SYS_FREE, (long)buf); }

__attribute__((weak)) void *malloc(size_t size)
{
	return (void *)ls_syscall1(LS_SYS_MALLOC, (long)size);
}

__attribute__((weak)) void *calloc(size_t nelt, size_t eltsize)
{
	return (void *)ls_syscall2(LS_SYS_CALLOC, (long)nelt, (long)eltsize);
}

__attribute__((weak)) void *realloc(void *buf, size_t new_size)
{
	return (void *)ls_syscall2(LS_SYS_REALLOC, (long)buf, (long)new_size);
}

__attribute__((weak)) void free(void *buf) { ls_syscall1(LS_SYS_FREE, (long)buf); }
