/*
 * syscall.h: the Pebbles system-call interface, implemented over the Landslide
 * guest kernel (see landslide_abi.h for the numbers). Signatures follow the
 * Pebbles specification so that P2 thread libraries and tests compile
 * unchanged.
 */
#ifndef _SYSCALL_H
#define _SYSCALL_H

#include <assert.h> /* as in the Pebbles basecode: assert and NULL come with it */
#include <landslide_abi.h>
#include <stddef.h>
#include <ureg.h>
#include <video_defines.h>

#ifndef PAGE_SIZE
#define PAGE_SIZE LS_PAGE_SIZE
#endif

#ifndef NORETURN
#define NORETURN __attribute__((__noreturn__))
#endif

/* Life cycle. */
int fork(void);                         /* unsupported: returns -1 */
int exec(char *execname, char *argvec[]); /* unsupported: returns -1 */
void set_status(int status);
void vanish(void) NORETURN;
int wait(int *status_ptr);              /* unsupported: returns -1 */
void task_vanish(int status) NORETURN;

/* Thread management. */
int thread_fork(void);                  /* child gets a copy of every register */
int gettid(void);
int yield(int tid);
int deschedule(int *reject);
int make_runnable(int tid);
unsigned int get_ticks(void);
int sleep(int ticks);

/*
 * Landslide extension: start a new thread running entry(arg) on the stack
 * whose (16-byte aligned) top is stack_top. Returns the new thread's tid, or
 * a negative number on error. Returning from entry is a bug (ra = 0): call
 * vanish().
 */
int thread_create(void *stack_top, void (*entry)(void *), void *arg);

/* Memory management. */
int new_pages(void *base, int len);
int remove_pages(void *base);

/* Console. */
char getchar(void);                     /* no input: returns -1 */
int readline(int size, char *buf);      /* no input: returns -1 */
int print(int size, char *buf);
int set_term_color(int color);          /* accepted, ignored */
int set_cursor_pos(int row, int col);   /* accepted, ignored */
int get_cursor_pos(int *row, int *col); /* always 0, 0 */

/* Miscellaneous. */
void halt(void) NORETURN;
int readfile(char *filename, char *buf, int count, int offset); /* -1 */

/* Accepted as harmless no-ops: the model checker replaces both. */
typedef void (*swexn_handler_t)(void *arg, ureg_t *ureg);
int swexn(void *esp3, swexn_handler_t eip, void *arg, ureg_t *newureg);
int misbehave(int mode);

#endif /* _SYSCALL_H */
