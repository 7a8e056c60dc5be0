/* stdio.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_STDIO_H
#define _LS_CXX_STDIO_H
extern "C" {
#include_next <stdio.h>
}
#endif
