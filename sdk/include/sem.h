/* sem.h: Pebbles P2 semaphores. The layout is in sem_type.h. */
#ifndef _SEM_H
#define _SEM_H

#include <sem_type.h>

int sem_init(sem_t *sem, int count);
void sem_destroy(sem_t *sem);
void sem_wait(sem_t *sem);
void sem_signal(sem_t *sem);

#endif /* _SEM_H */
