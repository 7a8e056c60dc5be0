/*
 * report.c: the 15-410 test-harness reporting functions (report.h).
 * A failure (report_end(END_FAIL), report_fatal, a failing
 * REPORT_FAILOUT_ON_ERR) panics so that the model checker records it.
 */
#include <report.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Weak: programs that never use the harness need not define it. */
extern const char *test_name __attribute__((weak));

static const char *name(void)
{
	return (&test_name != NULL && test_name != NULL) ? test_name : "";
}

#define PFX "(^_^)_"

void report_start(int type)
{
	const char *what = type == START_CMPLT ? " START__TYPE_COMPLETE"
			 : type == START_ABORT ? " START__TYPE_ABORT"
					       : " START__TYPE_FOREVER";
	lprintf("%s%s%s", PFX, name(), what);
}

void report_end(int type)
{
	if (type == END_SUCCESS) {
		lprintf("%s%s%s", PFX, name(), " END__SUCCESS");
		return;
	}
	lprintf("%s%s%s", PFX, name(), " END__FAIL");
	panic("%s END__FAIL", name());
}

void report_misc(const char *msg) { lprintf("%s%s%s", PFX, name(), msg); }

static void report_v(const char *fmt, va_list ap)
{
	char msg[200];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	lprintf("%s%s%s", PFX, name(), msg);
}

void report_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_v(fmt, ap);
	va_end(ap);
}

void report_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_v(fmt, ap);
	va_end(ap);
	report_end(END_FAIL);
	exit(-1); /* not reached */
}

int report_on_err(const char *expr, int line, int ret)
{
	if (ret < 0)
		lprintf("%s%sline %d: %s returned %d", PFX, name(), line, expr, ret);
	return ret;
}

int fatal_on_err(const char *expr, int line, int ret)
{
	if (ret < 0) {
		lprintf("%s%sline %d: %s returned %d", PFX, name(), line, expr, ret);
		report_end(END_FAIL);
	}
	return ret;
}
