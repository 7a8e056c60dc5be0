/* stdlib.c: number parsing, abs, a deterministic rand, and qsort. */
#include <stdlib.h>
#include <ctype.h>
#include <limits.h>

unsigned long strtoul(const char *s, char **endp, int base)
{
	const char *p = s;
	unsigned long v = 0;
	int neg = 0, any = 0;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if ((base == 0 || base == 16) && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    isxdigit((unsigned char)p[2])) {
		p += 2;
		base = 16;
	} else if (base == 0) {
		base = p[0] == '0' ? 8 : 10;
	}
	for (;; p++) {
		int d;
		if (isdigit((unsigned char)*p))
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'z')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'Z')
			d = *p - 'A' + 10;
		else
			break;
		if (d >= base)
			break;
		v = v * (unsigned long)base + (unsigned long)d;
		any = 1;
	}
	if (endp != NULL)
		*endp = (char *)(any ? p : s);
	return neg ? 0UL - v : v;
}

long strtol(const char *s, char **endp, int base)
{
	return (long)strtoul(s, endp, base);
}

long atol(const char *s) { return strtol(s, NULL, 10); }

int atoi(const char *s) { return (int)strtol(s, NULL, 10); }

int abs(int x) { return x < 0 ? -x : x; }

long labs(long x) { return x < 0 ? -x : x; }

/* Deterministic: the same program prints the same "random" numbers. */
static unsigned long rand_state = 1;

void srand(unsigned int seed) { rand_state = seed; }

int rand(void)
{
	rand_state = rand_state * 6364136223846793005UL + 1442695040888963407UL;
	return (int)((rand_state >> 33) & RAND_MAX);
}

/* Insertion sort: small inputs only, but simple and stable. */
void qsort(void *base, size_t nmemb, size_t size, int (*compar)(const void *, const void *))
{
	unsigned char *a = base;
	size_t i, j, k;

	for (i = 1; i < nmemb; i++) {
		for (j = i; j > 0 && compar(a + (j - 1) * size, a + j * size) > 0; j--) {
			unsigned char *x = a + (j - 1) * size, *y = a + j * size;
			for (k = 0; k < size; k++) {
				unsigned char t = x[k];
				x[k] = y[k];
				y[k] = t;
			}
		}
	}
}
