/* format.h: the SDK's printf engine (internal). */
#ifndef _LS_FORMAT_H
#define _LS_FORMAT_H

#include <stdarg.h>

/* A character sink: put(ctx, c) receives each output character in order. */
typedef void (*ls_put_fn)(void *ctx, char c);

/* Formats fmt with ap into put; returns the number of characters produced. */
int ls_vformat(ls_put_fn put, void *ctx, const char *fmt, va_list ap);

/* A bounded buffer that writes itself to fd when full (fd < 0: never). */
#define LS_OUTBUF_SIZE 256
struct ls_outbuf {
	int fd;
	int len;
	char buf[LS_OUTBUF_SIZE];
};

void ls_outbuf_put(void *ctx, char c);
void ls_outbuf_flush(struct ls_outbuf *ob);

#endif /* _LS_FORMAT_H */
