/*
 * stdio.c: printf and friends. Each call formats into a buffer on the
 * caller's stack and emits it with a single write (longer output is split
 * every 256 bytes), so lines from different threads never mix.
 */
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "ls_syscall.h"

int vprintf(const char *fmt, va_list ap)
{
	struct ls_outbuf ob;
	int n;

	ob.fd = 1;
	ob.len = 0;
	n = ls_vformat(ls_outbuf_put, &ob, fmt, ap);
	ls_outbuf_flush(&ob);
	return n;
}

int printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}

struct strbuf {
	char *buf;
	size_t size; /* capacity including the terminating NUL */
	size_t len;
};

static void strbuf_put(void *ctx, char c)
{
	struct strbuf *sb = ctx;
	if (sb->len + 1 < sb->size)
		sb->buf[sb->len] = c;
	sb->len++;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct strbuf sb;
	int n;

	sb.buf = buf;
	sb.size = size;
	sb.len = 0;
	n = ls_vformat(strbuf_put, &sb, fmt, ap);
	if (size > 0)
		buf[sb.len < size ? sb.len : size - 1] = '\0';
	return n;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int vsprintf(char *buf, const char *fmt, va_list ap)
{
	return vsnprintf(buf, (size_t)-1 >> 1, fmt, ap);
}

int sprintf(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsprintf(buf, fmt, ap);
	va_end(ap);
	return n;
}

int putchar(int c)
{
	char ch = (char)c;
	ls_write(1, &ch, 1);
	return (unsigned char)ch;
}

int puts(const char *s)
{
	return printf("%s\n", s);
}

void vlprintf(const char *fmt, va_list ap)
{
	struct ls_outbuf ob;

	ob.fd = 2;
	ob.len = 0;
	ls_vformat(ls_outbuf_put, &ob, fmt, ap);
	ls_outbuf_put(&ob, '\n');
	ls_outbuf_flush(&ob);
}

void lprintf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlprintf(fmt, ap);
	va_end(ap);
}
