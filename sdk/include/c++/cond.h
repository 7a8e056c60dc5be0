/* cond.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_COND_H
#define _LS_CXX_COND_H
extern "C" {
#include_next <cond.h>
}
#endif
