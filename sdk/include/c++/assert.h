/* assert.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_ASSERT_H
#define _LS_CXX_ASSERT_H
extern "C" {
#include_next <assert.h>
}
#endif
