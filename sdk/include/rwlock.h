/* rwlock.h: Pebbles P2 readers/writers locks. The layout is in rwlock_type.h. */
#ifndef _RWLOCK_H
#define _RWLOCK_H

#include <rwlock_type.h>

#define RWLOCK_READ  0
#define RWLOCK_WRITE 1

int rwlock_init(rwlock_t *rwlock);
void rwlock_destroy(rwlock_t *rwlock);
/* type is RWLOCK_READ or RWLOCK_WRITE. */
void rwlock_lock(rwlock_t *rwlock, int type);
void rwlock_unlock(rwlock_t *rwlock);
/* Atomically converts a write lock held by the caller into a read lock,
 * letting waiting readers in and no writer in between. */
void rwlock_downgrade(rwlock_t *rwlock);

#endif /* _RWLOCK_H */
