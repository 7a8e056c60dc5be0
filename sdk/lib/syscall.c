/*
 * syscall.c: the Pebbles system-call wrappers over the Landslide ABI. Each is
 * a real function so that it appears in stack traces (e.g. "deschedule").
 */
#include <syscall.h>
#include <landslide.h>

#include "ls_syscall.h"

int gettid(void) { return (int)ls_syscall0(LS_SYS_GETTID); }

int yield(int tid) { return (int)ls_syscall1(LS_SYS_YIELD, tid); }

int deschedule(int *reject) { return (int)ls_syscall1(LS_SYS_DESCHEDULE, (long)reject); }

int make_runnable(int tid) { return (int)ls_syscall1(LS_SYS_MAKE_RUNNABLE, tid); }

unsigned int get_ticks(void) { return (unsigned int)ls_syscall0(LS_SYS_GET_TICKS); }

int sleep(int ticks) { return (int)ls_syscall1(LS_SYS_SLEEP, ticks); }

int thread_create(void *stack_top, void (*entry)(void *), void *arg)
{
	return (int)ls_syscall3(LS_SYS_THREAD_CREATE, (long)stack_top, (long)entry, (long)arg);
}

void vanish(void)
{
	for (;;)
		ls_syscall0(LS_SYS_VANISH);
}

void set_status(int status) { ls_syscall1(LS_SYS_SET_STATUS, status); }

void task_vanish(int status)
{
	for (;;)
		ls_syscall1(LS_SYS_TASK_VANISH, status);
}

int new_pages(void *base, int len) { return (int)ls_syscall2(LS_SYS_NEW_PAGES, (long)base, len); }

int remove_pages(void *base) { return (int)ls_syscall1(LS_SYS_REMOVE_PAGES, (long)base); }

int print(int size, char *buf) { return (int)ls_syscall2(LS_SYS_PRINT, size, (long)buf); }

void halt(void)
{
	for (;;)
		ls_syscall0(LS_SYS_HALT);
}

/* Not supported by the Landslide guest kernel (single-task programs). */
int fork(void) { return -1; }

int exec(char *execname, char *argvec[])
{
	(void)execname;
	(void)argvec;
	return -1;
}

int wait(int *status_ptr)
{
	(void)status_ptr;
	return -1;
}

char getchar(void) { return (char)-1; }

int readline(int size, char *buf)
{
	(void)size;
	(void)buf;
	return -1;
}

int readfile(char *filename, char *buf, int count, int offset)
{
	(void)filename;
	(void)buf;
	(void)count;
	(void)offset;
	return -1;
}

/* Cosmetic console calls: accepted and ignored. */
int set_term_color(int color)
{
	(void)color;
	return 0;
}

int set_cursor_pos(int row, int col)
{
	(void)row;
	(void)col;
	return 0;
}

int get_cursor_pos(int *row, int *col)
{
	if (row)
		*row = 0;
	if (col)
		*col = 0;
	return 0;
}

/* Harmless no-ops: the model checker replaces both. */
int swexn(void *esp3, swexn_handler_t eip, void *arg, ureg_t *newureg)
{
	(void)esp3;
	(void)eip;
	(void)arg;
	(void)newureg;
	return 0;
}

int misbehave(int mode)
{
	(void)mode;
	return 0;
}

void tell_landslide_preempt(void) { ls_syscall0(LS_SYS_PREEMPT); }

void tell_landslide_dump_stack(void) { ls_syscall0(LS_SYS_DUMP_STACK); }
