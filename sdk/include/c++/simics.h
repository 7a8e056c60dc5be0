/* simics.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_SIMICS_H
#define _LS_CXX_SIMICS_H
extern "C" {
#include_next <simics.h>
}
#endif
