/* stdbool.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_STDBOOL_H
#define _LS_CXX_STDBOOL_H
extern "C" {
#include_next <stdbool.h>
}
#endif
