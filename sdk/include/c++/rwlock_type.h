/* rwlock_type.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_RWLOCK_TYPE_H
#define _LS_CXX_RWLOCK_TYPE_H
extern "C" {
#include_next <rwlock_type.h>
}
#endif
