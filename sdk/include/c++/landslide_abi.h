/* landslide_abi.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_LANDSLIDE_ABI_H
#define _LS_CXX_LANDSLIDE_ABI_H
extern "C" {
#include_next <landslide_abi.h>
}
#endif
