/* verifier.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_VERIFIER_H
#define _LS_CXX_VERIFIER_H
extern "C" {
#include_next <verifier.h>
}
#endif
