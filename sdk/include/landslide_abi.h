/*
 * landslide_abi.h: the system-call ABI between guest programs and the
 * Landslide guest kernel. This file is the contract; kernel/abi.go holds the
 * same numbers and a test checks that the two agree.
 *
 * Calling convention (RISC-V Linux style): a7 = number, a0..a5 = arguments,
 * result in a0. Negative results are errors. write and exit carry the Linux
 * RISC-V numbers so that one binary also runs under qemu-riscv64.
 */
#ifndef LANDSLIDE_ABI_H
#define LANDSLIDE_ABI_H

/* Linux-compatible subset. */
#define LS_SYS_WRITE          64   /* (fd, buf, len) -> len; fd 1 and 2 only   */
#define LS_SYS_EXIT           93   /* (status): ends the whole process         */
#define LS_SYS_EXIT_GROUP     94   /* (status): same as exit                   */

/* Pebbles thread syscalls. */
#define LS_SYS_GETTID         1000 /* () -> tid                                */
#define LS_SYS_YIELD          1001 /* (tid or -1) -> 0 / -1 if tid not runnable*/
#define LS_SYS_DESCHEDULE     1002 /* (int *reject) -> 0                       */
#define LS_SYS_MAKE_RUNNABLE  1003 /* (tid) -> 0 / -1 if not descheduled       */
#define LS_SYS_GET_TICKS      1004 /* () -> ticks (deterministic)              */
#define LS_SYS_SLEEP          1005 /* (ticks) -> 0                             */
#define LS_SYS_THREAD_FORK    1006 /* () -> child tid in parent, 0 in child;
                                      the child starts with a copy of every
                                      register (Pebbles semantics)             */
#define LS_SYS_THREAD_CREATE  1007 /* (stack_top, entry, arg) -> tid; the new
                                      thread runs entry(arg) on stack_top
                                      (16-byte aligned), ra = 0                */
#define LS_SYS_VANISH         1008 /* (): ends the calling thread             */
#define LS_SYS_SET_STATUS     1009 /* (status): the process's exit status      */
#define LS_SYS_TASK_VANISH    1010 /* (status): ends the whole process         */
#define LS_SYS_NEW_PAGES      1011 /* (base, len) -> 0 / -1; page aligned      */
#define LS_SYS_REMOVE_PAGES   1012 /* (base) -> 0 / -1; base of a new_pages    */
#define LS_SYS_PRINT          1013 /* (len, buf) -> 0                          */
#define LS_SYS_PANIC          1014 /* (msg, len): a bug, never returns         */
#define LS_SYS_HALT           1015 /* (): ends the process, status 0           */

/* Heap intrinsics: the kernel owns the heap so every block is tracked. */
#define LS_SYS_MALLOC         1020 /* (size) -> ptr or 0                       */
#define LS_SYS_CALLOC         1021 /* (n, size) -> ptr or 0                    */
#define LS_SYS_REALLOC        1022 /* (ptr, size) -> ptr or 0                  */
#define LS_SYS_FREE           1023 /* (ptr)                                    */

/* Annotations for the model checker. */
#define LS_SYS_PREEMPT        1030 /* (): an explicit preemption point         */
#define LS_SYS_DUMP_STACK     1031 /* (): print the caller's stack to stderr   */

/* Transactional memory (htm.h): Intel RTM's four operations. A
 * transaction is atomic; _xbegin is a preemption point whose result the
 * model checker chooses (started, or an abort status). */
#define LS_SYS_XBEGIN         1040 /* () -> _XBEGIN_STARTED or abort status   */
#define LS_SYS_XEND           1041 /* (): commit (a preemption point after)    */
#define LS_SYS_XABORT         1042 /* (code): abort, _xbegin returns
                                      _XABORT_EXPLICIT | code << 24            */
#define LS_SYS_XTEST          1043 /* () -> 1 inside a transaction, else 0     */

/* Linearizability checking (lineup.h) and declared waits (await.h). */
#define LS_SYS_LINEUP_CALL    1070 /* (op name, arg): a call of the test begins */
#define LS_SYS_LINEUP_RETURN  1071 /* (result): the thread's call returns      */
#define LS_SYS_LINEUP_MODE    1072 /* () -> 1 while the specification is being
                                      learned (calls run one at a time), else 0 */
#define LS_SYS_AWAIT          1073 /* (addr, size, value): the thread cannot run
                                      until the size-byte value at addr equals
                                      value (size 1, 2, 4 or 8)                 */

/* Pebbles' page size and the initial register contract of _start:
 * a0 = argc, a1 = argv, a2 = stack_high, a3 = stack_low (the main stack). */
#define LS_PAGE_SIZE          4096

#endif
