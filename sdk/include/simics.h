/*
 * simics.h: Pebbles simulator hooks. lprintf logs a line (fd 2); the magic
 * breakpoint and the sim_* progress hooks are no-ops under Landslide.
 */
#ifndef _SIMICS_H
#define _SIMICS_H

#include <stdio.h>

#define MAGIC_BREAK ((void)0)

static inline void sim_fr_prog(int i) { (void)i; }
static inline void sim_fr_here(void) {}

#endif /* _SIMICS_H */
