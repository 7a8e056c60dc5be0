/*
 * stdlib.h (Landslide guest SDK). The malloc family are the guest kernel's
 * heap intrinsics, so every block is tracked (use-after-free, double free,
 * overflow, leaks). They are weak symbols: a thread library may define its
 * own malloc() (Pebbles P2 style, e.g. wrapping _malloc() in a mutex).
 */
#ifndef _STDLIB_H
#define _STDLIB_H

#include <stddef.h>

#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 0x7fffffff

void *malloc(size_t size);
void *calloc(size_t nelt, size_t eltsize);
void *realloc(void *buf, size_t new_size);
void free(void *buf);

/* Ends the whole program with the given status (like returning from main). */
void exit(int status) __attribute__((__noreturn__));
/* Reports a bug: "abort() called". */
void abort(void) __attribute__((__noreturn__));
/* Formats a message and reports it to the checker as a bug. Never returns. */
void panic(const char *fmt, ...) __attribute__((__noreturn__, __format__(__printf__, 1, 2)));

int atoi(const char *s);
long atol(const char *s);
long strtol(const char *s, char **endp, int base);
unsigned long strtoul(const char *s, char **endp, int base);
int abs(int x);
long labs(long x);
int rand(void);
void srand(unsigned int seed);
void qsort(void *base, size_t nmemb, size_t size, int (*compar)(const void *, const void *));

#endif /* _STDLIB_H */
