/*
 * mutex_type.h: the layout of mutex_t used by the SDK's reference thread
 * library. A P2 thread library supplies its own mutex_type.h; the build puts
 * the library's directory first on the include path so that it wins.
 */
#ifndef _MUTEX_TYPE_H
#define _MUTEX_TYPE_H

typedef struct mutex {
	volatile int locked; /* 0 free, 1 held; changed only atomically */
	volatile int owner;  /* tid of the holder, -1 if none (a hint) */
} mutex_t;

#define MUTEX_INITIALIZER { 0, -1 }

#endif /* _MUTEX_TYPE_H */
