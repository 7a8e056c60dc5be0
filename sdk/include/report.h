/*
 * report.h: the 15-410 test-harness reporting functions. Messages are
 * lprintf()ed as "(^_^)_<test_name> <message>". report_end(END_FAIL) and the
 * fatal variants also panic, so that the model checker sees a failed test as
 * a bug.
 */
#ifndef _REPORT_H
#define _REPORT_H

#define START_CMPLT 0 /* the test is expected to complete */
#define START_ABORT 1 /* the test is expected to be killed */
#define START_4EVER 2 /* the test runs forever */

#define END_SUCCESS 0
#define END_FAIL    1

/* Defined by the test with DEF_TEST_NAME("name:"). */
extern const char *test_name;

void report_start(int type);
void report_end(int type);
void report_misc(const char *msg);
void report_err(const char *fmt, ...) __attribute__((__format__(__printf__, 1, 2)));
void report_fatal(const char *fmt, ...) __attribute__((__noreturn__, __format__(__printf__, 1, 2)));
int report_on_err(const char *expr, int line, int ret);
int fatal_on_err(const char *expr, int line, int ret);

#endif /* _REPORT_H */
