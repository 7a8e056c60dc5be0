/* stdlib.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_STDLIB_H
#define _LS_CXX_STDLIB_H
extern "C" {
#include_next <stdlib.h>
}
#endif
