/* string.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_STRING_H
#define _LS_CXX_STRING_H
extern "C" {
#include_next <string.h>
}
#endif
