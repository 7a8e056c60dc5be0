/* await.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_AWAIT_H
#define _LS_CXX_AWAIT_H
extern "C" {
#include_next <await.h>
}
#endif
