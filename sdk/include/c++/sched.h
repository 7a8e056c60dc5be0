/* sched.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_SCHED_H
#define _LS_CXX_SCHED_H
extern "C" {
#include_next <sched.h>
}
#endif
