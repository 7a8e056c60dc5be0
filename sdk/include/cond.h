/* cond.h: Pebbles P2 condition variables. The layout is in cond_type.h. */
#ifndef _COND_H
#define _COND_H

#include <mutex.h>
#include <cond_type.h>

int cond_init(cond_t *cv);
void cond_destroy(cond_t *cv);
void cond_wait(cond_t *cv, mutex_t *mp);
void cond_signal(cond_t *cv);
void cond_broadcast(cond_t *cv);

#endif /* _COND_H */
