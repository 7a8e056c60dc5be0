/* thread.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_THREAD_H
#define _LS_CXX_THREAD_H
extern "C" {
#include_next <thread.h>
}
#endif
