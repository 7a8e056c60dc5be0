/* stddef.h (Landslide guest SDK, C++): the C header with C linkage, NULL as C++'s null pointer constant. */
#ifndef _LS_CXX_STDDEF_H
#define _LS_CXX_STDDEF_H
#ifndef NULL
#define NULL __null
#endif
extern "C" {
#include_next <stddef.h>
}
#endif
