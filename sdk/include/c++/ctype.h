/* ctype.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_CTYPE_H
#define _LS_CXX_CTYPE_H
extern "C" {
#include_next <ctype.h>
}
#endif
