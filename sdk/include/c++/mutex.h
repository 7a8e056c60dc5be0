/* mutex.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_MUTEX_H
#define _LS_CXX_MUTEX_H
extern "C" {
#include_next <mutex.h>
}
#endif
