/* types.h: Pebbles compatibility header (Landslide guest SDK). */
#ifndef _TYPES_H
#define _TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef unsigned int uint;
typedef unsigned long ulong;
typedef unsigned short ushort;
typedef unsigned char uchar;

#endif /* _TYPES_H */
