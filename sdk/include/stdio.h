/*
 * stdio.h (Landslide guest SDK). printf and friends format into a buffer and
 * emit it with one write (fd 1) per call, so output from different threads
 * never interleaves within a line. lprintf writes one line to fd 2, the
 * simulator log (Pebbles' "lprintf to the Simics console").
 */
#ifndef _STDIO_H
#define _STDIO_H

#include <stdarg.h>
#include <stddef.h>

#ifndef EOF
#define EOF (-1)
#endif

int printf(const char *fmt, ...) __attribute__((__format__(__printf__, 1, 2)));
int vprintf(const char *fmt, va_list ap);
int sprintf(char *buf, const char *fmt, ...) __attribute__((__format__(__printf__, 2, 3)));
int snprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((__format__(__printf__, 3, 4)));
int vsprintf(char *buf, const char *fmt, va_list ap);
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int putchar(int c);
int puts(const char *s);

void lprintf(const char *fmt, ...) __attribute__((__format__(__printf__, 1, 2)));
void vlprintf(const char *fmt, va_list ap);

#endif /* _STDIO_H */
