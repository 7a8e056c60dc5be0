/*
 * crt0.S: program entry. The kernel starts the main thread here with
 * a0 = argc, a1 = argv, a2 = stack_high, a3 = stack_low (the main stack).
 * We record the stack bounds, set gp, call main(argc, argv) and hand its
 * return value to exit(): returning from main ends the whole program
 * (a program that wants its other threads to go on calls thr_exit()).
 */
#include <landslide_abi.h>

	.section .text._start, "ax", @progbits
	.globl _start
	.type _start, @function
_start:
	.cfi_startproc
	.cfi_undefined ra
	.option push
	.option norelax
	lla gp, __global_pointer$
	.option pop
	lla t0, ls_main_stack_high
	sd a2, 0(t0)
	lla t0, ls_main_stack_low
	sd a3, 0(t0)
	mv s0, zero       /* the frame-pointer chain ends here */
	mv ra, zero
	call main
	call exit
	/* exit() does not return; make sure of it anyway. */
1:	li a7, LS_SYS_EXIT
	ecall
	j 1b
	.cfi_endproc
	.size _start, . - _start

	.bss
	.balign 8
	.globl ls_main_stack_high
	.type ls_main_stack_high, @object
ls_main_stack_high:
	.zero 8
	.size ls_main_stack_high, 8
	.globl ls_main_stack_low
	.type ls_main_stack_low, @object
ls_main_stack_low:
	.zero 8
	.size ls_main_stack_low, 8
