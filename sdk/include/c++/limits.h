/* limits.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_LIMITS_H
#define _LS_CXX_LIMITS_H
extern "C" {
#include_next <limits.h>
}
#endif
