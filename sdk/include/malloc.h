/* malloc.h: Pebbles compatibility; see stdlib.h. */
#ifndef _MALLOC_H
#define _MALLOC_H

#include <stdlib.h>

#endif /* _MALLOC_H */
