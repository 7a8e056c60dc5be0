/* sem_type.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_SEM_TYPE_H
#define _LS_CXX_SEM_TYPE_H
extern "C" {
#include_next <sem_type.h>
}
#endif
