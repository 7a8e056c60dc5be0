/* sem.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_SEM_H
#define _LS_CXX_SEM_H
extern "C" {
#include_next <sem.h>
}
#endif
