/* stdio_posix.c: the streams and sscanf of the POSIX stdio.h. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "../lib/format.h"

struct ls_file {
	int fd;
};

static struct ls_file ls_files[3] = {{0}, {1}, {2}};

FILE *const stdin = &ls_files[0];
FILE *const stdout = &ls_files[1];
FILE *const stderr = &ls_files[2];

int vfprintf(FILE *f, const char *fmt, va_list ap)
{
	struct ls_outbuf ob;
	int n;

	if (f == NULL || f == stdin)
		return -1;
	ob.fd = f->fd;
	ob.len = 0;
	n = ls_vformat(ls_outbuf_put, &ob, fmt, ap);
	ls_outbuf_flush(&ob);
	return n;
}

int fprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vfprintf(f, fmt, ap);
	va_end(ap);
	return n;
}

int fputs(const char *s, FILE *f) { return fprintf(f, "%s", s) < 0 ? EOF : 0; }

int fputc(int c, FILE *f) { return fprintf(f, "%c", c) < 0 ? EOF : (unsigned char)c; }

int putc(int c, FILE *f) { return fputc(c, f); }

int fflush(FILE *f)
{
	(void)f;
	return 0;
}

/* digit is the value of c in base b, or -1. */
static int digit(int c, int b)
{
	int v = -1;
	if (c >= '0' && c <= '9')
		v = c - '0';
	else if (c >= 'a' && c <= 'z')
		v = c - 'a' + 10;
	else if (c >= 'A' && c <= 'Z')
		v = c - 'A' + 10;
	return v < b ? v : -1;
}

/* store writes v to the pointer ap's next argument, of the given size. */
static void store(va_list *ap, int size, unsigned long long v)
{
	switch (size) {
	case -2:
		*va_arg(*ap, char *) = (char)v;
		break;
	case -1:
		*va_arg(*ap, short *) = (short)v;
		break;
	case 0:
		*va_arg(*ap, int *) = (int)v;
		break;
	default:
		*va_arg(*ap, long long *) = (long long)v;
		break;
	}
}

int vsscanf(const char *s, const char *fmt, va_list ap0)
{
	va_list ap;
	const char *p = s;
	int assigned = 0, converted = 0, ended = 0;

	va_copy(ap, ap0);
	while (*fmt) {
		if (isspace((unsigned char)*fmt)) {
			while (isspace((unsigned char)*p))
				p++;
			fmt++;
			continue;
		}
		if (*fmt != '%' || fmt[1] == '%') {
			if (*fmt == '%')
				fmt++;
			if (*p != *fmt) {
				ended = *p == '\0';
				break;
			}
			p++;
			fmt++;
			continue;
		}
		fmt++;
		int skip = 0, width = 0, size = 0;
		if (*fmt == '*') {
			skip = 1;
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		for (;;) {
			if (*fmt == 'h') {
				size = size < 0 ? -2 : -1;
			} else if (*fmt == 'l' || *fmt == 'z' || *fmt == 'j' || *fmt == 't') {
				size = 1; /* long, long long, size_t: 8 bytes on RV64 */
			} else {
				break;
			}
			fmt++;
		}
		char conv = *fmt++;
		if (conv == '\0')
			break;
		if (conv != 'c' && conv != '[') {
			while (isspace((unsigned char)*p))
				p++;
		}
		if (*p == '\0') {
			ended = 1;
			break;
		}
		if (width == 0)
			width = conv == 'c' ? 1 : -1;
		if (conv == 'c' || conv == 's' || conv == '[') {
			char set[256];
			int negate = 0;
			memset(set, 0, sizeof set);
			if (conv == '[') {
				if (*fmt == '^') {
					negate = 1;
					fmt++;
				}
				if (*fmt == ']')
					set[(unsigned char)*fmt++] = 1;
				while (*fmt && *fmt != ']')
					set[(unsigned char)*fmt++] = 1;
				if (*fmt == ']')
					fmt++;
			}
			char *out = skip ? NULL : va_arg(ap, char *);
			int n = 0;
			while (*p && (width < 0 || n < width)) {
				unsigned char c = (unsigned char)*p;
				if (conv == 's' && isspace(c))
					break;
				if (conv == '[' && !set[c] != negate)
					break;
				if (out)
					out[n] = (char)c;
				n++;
				p++;
			}
			if (n == 0)
				break;
			if (out && conv != 'c')
				out[n] = '\0';
			converted++;
			assigned += out != NULL;
			continue;
		}
		int base = 10;
		switch (conv) {
		case 'd':
		case 'u':
			break;
		case 'i':
			base = 0;
			break;
		case 'x':
		case 'X':
			base = 16;
			break;
		case 'o':
			base = 8;
			break;
		default:
			goto done; /* an unsupported conversion: stop, as at a mismatch */
		}
		const char *q = p;
		int neg = 0;
		if ((*q == '-' || *q == '+') && width != 1) {
			neg = *q == '-';
			q++;
		}
		if (base == 0) {
			base = 10;
			if (q[0] == '0') {
				base = 8;
				if ((q[1] == 'x' || q[1] == 'X') && digit(q[2], 16) >= 0) {
					base = 16;
					q += 2;
				}
			}
		} else if (base == 16 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X') && digit(q[2], 16) >= 0) {
			q += 2;
		}
		unsigned long long v = 0;
		const char *start = q;
		while (digit(*q, base) >= 0 && (width < 0 || q - p < width))
			v = v * base + (unsigned long long)digit(*q++, base);
		if (q == start)
			break;
		p = q;
		if (neg)
			v = -v;
		if (!skip) {
			store(&ap, size, v);
			assigned++;
		}
		converted++;
	}
done:
	va_end(ap);
	if (converted == 0 && ended)
		return EOF; /* the input ended before the first conversion */
	return assigned;
}

int sscanf(const char *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsscanf(s, fmt, ap);
	va_end(ap);
	return n;
}
