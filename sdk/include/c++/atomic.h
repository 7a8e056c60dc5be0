/* atomic.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_ATOMIC_H
#define _LS_CXX_ATOMIC_H
extern "C" {
#include_next <atomic.h>
}
#endif
