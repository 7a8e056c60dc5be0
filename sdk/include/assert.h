/*
 * assert.h (Landslide guest SDK). A failed assertion panics with
 * "file:line: failed assertion `expr'", which the checker reports as a bug.
 */
#ifndef _ASSERT_H
#define _ASSERT_H

void panic(const char *fmt, ...) __attribute__((__noreturn__, __format__(__printf__, 1, 2)));

#ifdef NDEBUG
#define assert(expr) ((void)0)
#else
#define assert(expr) \
	((void)((expr) ? 0 : (panic("%s:%u: failed assertion `%s'", __FILE__, __LINE__, #expr), 0)))
#endif

#endif /* _ASSERT_H */
