/* malloc_internal.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_MALLOC_INTERNAL_H
#define _LS_CXX_MALLOC_INTERNAL_H
extern "C" {
#include_next <malloc_internal.h>
}
#endif
