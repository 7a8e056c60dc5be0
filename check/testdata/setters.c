/*
 * setters: N-1 threads each write a = 1 then b = -1 with no
 * synchronisation, and one more thread, created last, reads a then b and
 * asserts that it saw both writes of one setter or neither. The assertion
 * fails only when the checker runs between a setter's two writes (or
 * between its own two reads), with the setters before it in some order:
 * a bug of one precise ordering among many identical threads (the shape
 * of SCTBench's reorder_N_bad, written here from that description).
 */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

#define MAXN 32

static int a, b;

static void *setter(void *arg)
{
	a = 1;
	b = -1;
	return arg;
}

static void *checker(void *arg)
{
	int x = a, y = b;
	assert((x == 0 && y == 0) || (x == 1 && y == -1));
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 9;
	if (n < 1 || n >= MAXN)
		return 2;
	pthread_t t[MAXN];
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, setter, NULL);
	pthread_create(&t[n], NULL, checker, NULL);
	for (int i = 0; i <= n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
