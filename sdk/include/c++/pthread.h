/* pthread.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_PTHREAD_H
#define _LS_CXX_PTHREAD_H
extern "C" {
#include_next <pthread.h>
}
#endif
