/*
 * panic.c: panic(), exit() and abort(). panic formats its message and
 * reports it with LS_SYS_PANIC: the checker records a bug with the calling
 * thread's stack. Messages longer than 255 bytes are truncated.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ls_syscall.h"

void panic(const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(msg) - 1)
		n = (int)sizeof(msg) - 1;
	for (;;)
		ls_syscall2(LS_SYS_PANIC, (long)msg, n);
}

void exit(int status)
{
	for (;;)
		ls_syscall1(LS_SYS_EXIT, status);
}

void abort(void)
{
	panic("abort() called");
}
