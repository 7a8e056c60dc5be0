/*
 * thr_asm.S: the last instructions of an exiting thread. Once *gone is 1 the
 * joiner may free this thread's stack at any moment, so nothing after that
 * store may use the stack: the store and the vanish are done here, in
 * registers only.
 */
#include <landslide_abi.h>

	.text
	.globl thr_vanish_gone
	.type thr_vanish_gone, @function
thr_vanish_gone:
	li t0, 1
	amoswap.w.rl zero, t0, (a0)   /* *gone = 1, after every earlier access */
1:	li a7, LS_SYS_VANISH
	ecall
	j 1b                          /* vanish does not return */
	.size thr_vanish_gone, . - thr_vanish_gone
