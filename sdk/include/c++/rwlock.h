/* rwlock.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_RWLOCK_H
#define _LS_CXX_RWLOCK_H
extern "C" {
#include_next <rwlock.h>
}
#endif
