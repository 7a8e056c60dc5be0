/*
 * thread_fork.S: the Pebbles thread_fork system call. The child starts with
 * a copy of every register (including sp), so this wrapper must not touch
 * the stack: the caller switches the child to its own stack.
 */
#include <landslide_abi.h>

	.text
	.globl thread_fork
	.type thread_fork, @function
thread_fork:
	li a7, LS_SYS_THREAD_FORK
	ecall
	ret
	.size thread_fork, . - thread_fork
