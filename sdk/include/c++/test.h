/* test.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_TEST_H
#define _LS_CXX_TEST_H
extern "C" {
#include_next <test.h>
}
#endif
