/* types.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_TYPES_H
#define _LS_CXX_TYPES_H
extern "C" {
#include_next <types.h>
}
#endif
