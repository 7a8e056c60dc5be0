/* stdint.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_STDINT_H
#define _LS_CXX_STDINT_H
extern "C" {
#include_next <stdint.h>
}
#endif
