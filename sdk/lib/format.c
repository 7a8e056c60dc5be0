/*
 * format.c: the printf engine shared by printf, snprintf, lprintf and panic.
 *
 * Conversions: d i u x X o p s c %. Flags: - 0 + space #. Width and
 * precision (numbers or *). Length modifiers: hh h l ll z t j.
 */
#include <stdarg.h>
#include <stddef.h>

#include "format.h"
#include "ls_syscall.h"

struct spec {
	int left;   /* '-' */
	int zero;   /* '0' */
	int plus;   /* '+' */
	int space;  /* ' ' */
	int alt;    /* '#' */
	int width;
	int prec;   /* -1: none */
};

static int pad(ls_put_fn put, void *ctx, char c, int n)
{
	int i;
	for (i = 0; i < n; i++)
		put(ctx, c);
	return n > 0 ? n : 0;
}

static int emit_str(ls_put_fn put, void *ctx, const struct spec *sp, const char *s)
{
	int len = 0, n = 0, i;

	if (s == NULL)
		s = "(null)";
	while (s[len] != '\0' && (sp->prec < 0 || len < sp->prec))
		len++;
	if (!sp->left)
		n += pad(put, ctx, ' ', sp->width - len);
	for (i = 0; i < len; i++)
		put(ctx, s[i]);
	n += len;
	if (sp->left)
		n += pad(put, ctx, ' ', sp->width - len);
	return n;
}

/* Emits an unsigned magnitude v in base with an optional sign or prefix. */
static int emit_num(ls_put_fn put, void *ctx, const struct spec *sp, unsigned long long v,
		    unsigned base, int upper, const char *prefix)
{
	char digits[24];
	const char *set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	int nd = 0, nprefix = 0, zeros = 0, total, n = 0, i;

	while (v != 0) {
		digits[nd++] = set[v % base];
		v /= base;
	}
	if (nd == 0 && sp->prec != 0)
		digits[nd++] = '0';
	while (prefix[nprefix] != '\0')
		nprefix++;
	if (sp->prec > nd)
		zeros = sp->prec - nd;
	total = nprefix + zeros + nd;
	if (sp->zero && !sp->left && sp->prec < 0 && sp->width > total) {
		zeros += sp->width - total;
		total = sp->width;
	}
	if (!sp->left)
		n += pad(put, ctx, ' ', sp->width - total);
	for (i = 0; i < nprefix; i++)
		put(ctx, prefix[i]);
	n += nprefix;
	n += pad(put, ctx, '0', zeros);
	for (i = nd - 1; i >= 0; i--)
		put(ctx, digits[i]);
	n += nd;
	if (sp->left)
		n += pad(put, ctx, ' ', sp->width - total);
	return n;
}

int ls_vformat(ls_put_fn put, void *ctx, const char *fmt, va_list ap)
{
	int n = 0;

	while (*fmt != '\0') {
		struct spec sp = { 0, 0, 0, 0, 0, 0, -1 };
		int lng = 0; /* 0 int, 1 long, 2 long long, -1 short, -2 char */
		char c = *fmt++;

		if (c != '%') {
			put(ctx, c);
			n++;
			continue;
		}
		for (;; fmt++) {
			if (*fmt == '-')
				sp.left = 1;
			else if (*fmt == '0')
				sp.zero = 1;
			else if (*fmt == '+')
				sp.plus = 1;
			else if (*fmt == ' ')
				sp.space = 1;
			else if (*fmt == '#')
				sp.alt = 1;
			else
				break;
		}
		if (*fmt == '*') {
			sp.width = va_arg(ap, int);
			if (sp.width < 0) {
				sp.left = 1;
				sp.width = -sp.width;
			}
			fmt++;
		} else {
			while (*fmt >= '0' && *fmt <= '9')
				sp.width = sp.width * 10 + (*fmt++ - '0');
		}
		if (*fmt == '.') {
			fmt++;
			sp.prec = 0;
			if (*fmt == '*') {
				sp.prec = va_arg(ap, int);
				if (sp.prec < 0)
					sp.prec = -1;
				fmt++;
			} else {
				while (*fmt >= '0' && *fmt <= '9')
					sp.prec = sp.prec * 10 + (*fmt++ - '0');
			}
		}
		for (;; fmt++) {
			if (*fmt == 'l')
				lng = lng >= 1 ? 2 : 1;
			else if (*fmt == 'h')
				lng = lng <= -1 ? -2 : -1;
			else if (*fmt == 'z' || *fmt == 't' || *fmt == 'j')
				lng = 1;
			else
				break;
		}
		c = *fmt;
		if (c == '\0')
			break;
		fmt++;
		switch (c) {
		case 'd':
		case 'i': {
			long long v;
			unsigned long long mag;
			const char *prefix = "";
			if (lng >= 2)
				v = va_arg(ap, long long);
			else if (lng == 1)
				v = va_arg(ap, long);
			else
				v = va_arg(ap, int);
			if (lng == -1)
				v = (short)v;
			else if (lng == -2)
				v = (signed char)v;
			if (v < 0) {
				mag = 0ULL - (unsigned long long)v;
				prefix = "-";
			} else {
				mag = (unsigned long long)v;
				if (sp.plus)
					prefix = "+";
				else if (sp.space)
					prefix = " ";
			}
			n += emit_num(put, ctx, &sp, mag, 10, 0, prefix);
			break;
		}
		case 'u':
		case 'x':
		case 'X':
		case 'o': {
			unsigned long long v;
			unsigned base = c == 'u' ? 10 : c == 'o' ? 8 : 16;
			const char *prefix = "";
			if (lng >= 2)
				v = va_arg(ap, unsigned long long);
			else if (lng == 1)
				v = va_arg(ap, unsigned long);
			else
				v = va_arg(ap, unsigned int);
			if (lng == -1)
				v = (unsigned short)v;
			else if (lng == -2)
				v = (unsigned char)v;
			if (sp.alt && v != 0)
				prefix = c == 'x' ? "0x" : c == 'X' ? "0X" : c == 'o' ? "0" : "";
			n += emit_num(put, ctx, &sp, v, base, c == 'X', prefix);
			break;
		}
		case 'p': {
			void *p = va_arg(ap, void *);
			n += emit_num(put, ctx, &sp, (unsigned long)p, 16, 0, "0x");
			break;
		}
		case 's':
			n += emit_str(put, ctx, &sp, va_arg(ap, const char *));
			break;
		case 'c': {
			char s[2];
			s[0] = (char)va_arg(ap, int);
			s[1] = '\0';
			sp.prec = 1;
			if (s[0] == '\0') {
				/* emit_str stops at NUL; print the NUL itself. */
				if (!sp.left)
					n += pad(put, ctx, ' ', sp.width - 1);
				put(ctx, '\0');
				n++;
				if (sp.left)
					n += pad(put, ctx, ' ', sp.width - 1);
			} else {
				n += emit_str(put, ctx, &sp, s);
			}
			break;
		}
		case '%':
			put(ctx, '%');
			n++;
			break;
		default:
			/* Unknown conversion: print it as written. */
			put(ctx, '%');
			put(ctx, c);
			n += 2;
			break;
		}
	}
	return n;
}

void ls_outbuf_flush(struct ls_outbuf *ob)
{
	if (ob->len > 0 && ob->fd >= 0)
		ls_write(ob->fd, ob->buf, ob->len);
	ob->len = 0;
}

void ls_outbuf_put(void *ctx, char c)
{
	struct ls_outbuf *ob = ctx;
	if (ob->len == LS_OUTBUF_SIZE)
		ls_outbuf_flush(ob);
	ob->buf[ob->len++] = c;
}
