/* malloc.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_MALLOC_H
#define _LS_CXX_MALLOC_H
extern "C" {
#include_next <malloc.h>
}
#endif
