/*
 * stdio.h for POSIX programs (Landslide guest SDK): the SDK's stdio.h,
 * plus the streams and the scanning that test programs use: FILE with
 * stdout and stderr (fds 1 and 2: both are the program's output),
 * fprintf and friends (one write per call, as printf), fflush (nothing
 * is buffered), and sscanf. stdin reads nothing.
 * Only the POSIX library's builds see it (sdk.Options.Posix), so the
 * P2 programs' headers stay as they were.
 */
#ifndef _LS_POSIX_STDIO_H
#define _LS_POSIX_STDIO_H

#include_next <stdio.h>

typedef struct ls_file FILE;

extern FILE *const stdin, *const stdout, *const stderr;
#define stdin stdin
#define stdout stdout
#define stderr stderr

int fprintf(FILE *f, const char *fmt, ...) __attribute__((__format__(__printf__, 2, 3)));
int vfprintf(FILE *f, const char *fmt, va_list ap);
int fputs(const char *s, FILE *f);
int fputc(int c, FILE *f);
int putc(int c, FILE *f);
int fflush(FILE *f);

/*
 * sscanf reads whitespace, literal characters and the conversions
 * %d %i %u %x %o %c %s %[...] with the h, hh, l, ll and z sizes, a field
 * width, and %* (no assignment); it returns the number of assignments,
 * or EOF if the input ended before the first.
 */
int sscanf(const char *s, const char *fmt, ...) __attribute__((__format__(__scanf__, 2, 3)));
int vsscanf(const char *s, const char *fmt, va_list ap);

#endif /* _LS_POSIX_STDIO_H */
