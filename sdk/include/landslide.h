/*
 * landslide.h: optional annotations for the model checker (thesis §3.1.4)
 * and what the SDK's startup code records.
 *
 * tell_landslide_preempt() marks an explicit preemption point;
 * tell_landslide_dump_stack() prints the calling thread's stack trace.
 * Both are harmless outside Landslide.
 *
 * LANDSLIDE_CONFIG("without thr_create") records a directive for the
 * model checker in the binary itself (a non-loaded ".landslide" section),
 * so a test carries the configuration it is meant to be checked with (the
 * thesis's per-test within_function/without_function lines). Directives:
 *
 *   within FUNC    only preempt with FUNC on the stack
 *   without FUNC   never preempt with FUNC on the stack
 *
 * `landslide explore` and `run` apply them unless --within, --without or
 * --no-test-config is given. Use at file scope; the string may not contain
 * double quotes or backslashes.
 */
#ifndef _LANDSLIDE_H
#define _LANDSLIDE_H

#define LANDSLIDE_CONFIG(directive)                                   \
	__asm__(".pushsection .landslide,\"\",@progbits\n\t"             \
		".asciz \"" directive "\"\n\t"                               \
		".popsection")

void tell_landslide_preempt(void);
void tell_landslide_dump_stack(void);

/* The main thread's stack, [ls_main_stack_low, ls_main_stack_high), as the
 * kernel passed it to _start (a3 and a2). Set before main() runs. */
extern void *ls_main_stack_high;
extern void *ls_main_stack_low;

#endif /* _LANDSLIDE_H */
