/* test.h: the 15-410 test-harness interface; see 410_tests.h. */
#ifndef _TEST_H
#define _TEST_H

#include <410_tests.h>

#endif /* _TEST_H */
