/* sched.h (Landslide guest SDK): sched_yield, a preemption point. */
#ifndef _SCHED_H
#define _SCHED_H

int sched_yield(void);

#endif /* _SCHED_H */
