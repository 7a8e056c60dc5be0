/*
 * posix_syscall.h: raw system calls for sdk/posix/ (ls_syscall.h's, plus
 * the four-argument one pthread_create needs).
 */
#ifndef _POSIX_SYSCALL_H
#define _POSIX_SYSCALL_H

#include <landslide_posix_abi.h>

#include "../lib/ls_syscall.h"

#define ls_syscall4(n, x0, x1, x2, x3)                                        \
	({                                                                    \
		register long _a0 __asm__("a0") = (long)(x0);                 \
		register long _a1 __asm__("a1") = (long)(x1);                 \
		register long _a2 __asm__("a2") = (long)(x2);                 \
		register long _a3 __asm__("a3") = (long)(x3);                 \
		register long _a7 __asm__("a7") = (long)(n);                  \
		__asm__ volatile("ecall"                                      \
				 : "+r"(_a0)                                  \
				 : "r"(_a1), "r"(_a2), "r"(_a3), "r"(_a7)     \
				 : "memory");                                 \
		_a0;                                                          \
	})

#endif /* _POSIX_SYSCALL_H */
