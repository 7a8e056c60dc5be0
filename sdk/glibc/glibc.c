/*
 * glibc.c (Landslide guest SDK): the functions of glibc that a program
 * preprocessed against glibc's headers calls where glibc's macros
 * expanded (SV-COMP's and SCTBench's .i and preprocessed .c files):
 * assert's, with glibc's message. Linked only into a program that calls
 * one of them (sdk.Build).
 */
#include <assert.h>

void __assert_fail(const char *assertion, const char *file, unsigned int line, const char *function)
{
	panic("%s:%u: %s: Assertion `%s' failed.", file, line, function, assertion);
}

void __assert_perror_fail(int errnum, const char *file, unsigned int line, const char *function)
{
	panic("%s:%u: %s: Unexpected error: %d.", file, line, function, errnum);
}

void __assert(const char *assertion, const char *file, int line)
{
	panic("%s:%d: Assertion `%s' failed.", file, line, assertion);
}
