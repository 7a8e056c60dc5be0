/*
 * 410_tests.h: the 15-410 test-harness macros (Landslide guest SDK).
 *
 *   DEF_TEST_NAME("mytest:");        at file scope, once per program
 *   REPORT_LOCAL_INIT;               at the top of a function (no-op)
 *   REPORT_START_CMPLT;              start: the test should complete
 *   REPORT_ON_ERR(expr);             report if expr < 0, yields expr
 *   REPORT_FAILOUT_ON_ERR(expr);     fail the test if expr < 0
 *   REPORT_MISC("message");
 *   REPORT_END_SUCCESS; / REPORT_END_FAIL;
 */
#ifndef _410_TESTS_H_
#define _410_TESTS_H_

#define TEST_START_CMPLT " START__TYPE_COMPLETE"
#define TEST_START_ABORT " START__TYPE_ABORT"
#define TEST_START_4EVER " START__TYPE_FOREVER"
#define TEST_END_SUCCESS " END__SUCCESS"
#define TEST_END_FAIL    " END__FAIL"
#define TEST_PFX         "(^_^)_"

#include <simics.h>
#include <report.h>

#define DEF_TEST_NAME(x) const char *test_name = (x)

#define REPORT_LOCAL_INIT
#define REPORT_START_CMPLT  report_start(START_CMPLT)
#define REPORT_START_ABORT  report_start(START_ABORT)
#define REPORT_START_4EVER  report_start(START_4EVER)
#define REPORT_END_SUCCESS  report_end(END_SUCCESS)
#define REPORT_END_FAIL     report_end(END_FAIL)

#define REPORT_MISC(msg)            report_misc(msg)
#define REPORT_ERR(...)             report_err(__VA_ARGS__)
#define REPORT_FAIL_ERR(...)        report_fatal(__VA_ARGS__)
#define REPORT_ON_ERR(expr)         report_on_err(#expr, __LINE__, (expr))
#define REPORT_FAILOUT_ON_ERR(expr) fatal_on_err(#expr, __LINE__, (expr))

#define TEST_PROG_ENGAGE(i) ((void)(i))
#define TEST_PROG_PROGRESS  ((void)0)

#endif /* _410_TESTS_H_ */
