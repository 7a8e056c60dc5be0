/* htm.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_HTM_H
#define _LS_CXX_HTM_H
extern "C" {
#include_next <htm.h>
}
#endif
