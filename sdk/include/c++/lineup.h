/* lineup.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_LINEUP_H
#define _LS_CXX_LINEUP_H
extern "C" {
#include_next <lineup.h>
}
#endif
