/* landslide.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_LANDSLIDE_H
#define _LS_CXX_LANDSLIDE_H
extern "C" {
#include_next <landslide.h>
}
#endif
