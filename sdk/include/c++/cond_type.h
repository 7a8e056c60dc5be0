/* cond_type.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_COND_TYPE_H
#define _LS_CXX_COND_TYPE_H
extern "C" {
#include_next <cond_type.h>
}
#endif
