/* stdarg.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_STDARG_H
#define _LS_CXX_STDARG_H
extern "C" {
#include_next <stdarg.h>
}
#endif
