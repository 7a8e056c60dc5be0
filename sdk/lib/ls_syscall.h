/*
 * ls_syscall.h: raw system calls for the SDK's own sources (not installed
 * for programs). a7 = number, a0..a5 = arguments, a0 = result.
 *
 * These are macros, not inline functions, so that the debug line of each
 * ecall is the line of the wrapper that makes it (a stack trace then reads
 * "malloc (sdk/lib/malloc.c:26)", not a line of this header).
 */
#ifndef _LS_SYSCALL_H
#define _LS_SYSCALL_H

#include <landslide_abi.h>

#define ls_syscall0(n)                                                        \
	({                                                                    \
		register long _a0 __asm__("a0");                              \
		register long _a7 __asm__("a7") = (long)(n);                  \
		__asm__ volatile("ecall" : "=r"(_a0) : "r"(_a7) : "memory");  \
		_a0;                                                          \
	})

#define ls_syscall1(n, x0)                                                    \
	({                                                                    \
		register long _a0 __asm__("a0") = (long)(x0);                 \
		register long _a7 __asm__("a7") = (long)(n);                  \
		__asm__ volatile("ecall" : "+r"(_a0) : "r"(_a7) : "memory");  \
		_a0;                                                          \
	})

#define ls_syscall2(n, x0, x1)                                                \
	({                                                                    \
		register long _a0 __asm__("a0") = (long)(x0);                 \
		register long _a1 __asm__("a1") = (long)(x1);                 \
		register long _a7 __asm__("a7") = (long)(n);                  \
		__asm__ volatile("ecall"                                      \
				 : "+r"(_a0)                                  \
				 : "r"(_a1), "r"(_a7)                         \
				 : "memory");                                 \
		_a0;                                                          \
	})

#define ls_syscall3(n, x0, x1, x2)                                            \
	({                                                                    \
		register long _a0 __asm__("a0") = (long)(x0);                 \
		register long _a1 __asm__("a1") = (long)(x1);                 \
		register long _a2 __asm__("a2") = (long)(x2);                 \
		register long _a7 __asm__("a7") = (long)(n);                  \
		__asm__ volatile("ecall"                                      \
				 : "+r"(_a0)                                  \
				 : "r"(_a1), "r"(_a2), "r"(_a7)               \
				 : "memory");                                 \
		_a0;                                                          \
	})

/* Writes len bytes to fd 1 or 2 (LS_SYS_WRITE). */
#define ls_write(fd, buf, len) ls_syscall3(LS_SYS_WRITE, (fd), (buf), (len))

#endif /* _LS_SYSCALL_H */
