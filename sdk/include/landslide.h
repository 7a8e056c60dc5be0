/*
 * landslide.h: optional annotations for the model checker (thesis §3.1.4)
 * and what the SDK's startup code records.
 *
 * tell_landslide_preempt() marks an explicit preemption point;
 * tell_landslide_dump_stack() prints the calling thread's stack trace.
 * Both are harmless outside Landslide.
 */
#ifndef _LANDSLIDE_H
#define _LANDSLIDE_H

void tell_landslide_preempt(void);
void tell_landslide_dump_stack(void);

/* The main thread's stack, [ls_main_stack_low, ls_main_stack_high), as the
 * kernel passed it to _start (a3 and a2). Set before main() runs. */
extern void *ls_main_stack_high;
extern void *ls_main_stack_low;

#endif /* _LANDSLIDE_H */
