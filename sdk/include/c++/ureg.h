/* ureg.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_UREG_H
#define _LS_CXX_UREG_H
extern "C" {
#include_next <ureg.h>
}
#endif
