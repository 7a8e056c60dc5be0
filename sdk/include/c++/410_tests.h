/* 410_tests.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_410_TESTS_H
#define _LS_CXX_410_TESTS_H
extern "C" {
#include_next <410_tests.h>
}
#endif
