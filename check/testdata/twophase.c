/*
 * twophase: N writers each set x = 1 under lock a, then y = x + 1 under
 * lock b; one reader, created last, reads x under a and, if a writer's
 * first phase has run, y under b, and asserts y == x + 1. It fails only
 * when the reader runs after some writer's first phase and before every
 * writer's second: one thread early among many (the shape of SCTBench's
 * twostage_100_bad, written here from that description). x is read
 * under b in the writers' second phase: a data race, as there.
 */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

#define MAXN 128

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static int x, y;

static void *writer(void *arg)
{
	pthread_mutex_lock(&a);
	x = 1;
	pthread_mutex_unlock(&a);
	pthread_mutex_lock(&b);
	y = x + 1;
	pthread_mutex_unlock(&b);
	return arg;
}

static void *reader(void *arg)
{
	pthread_mutex_lock(&a);
	int sx = x;
	pthread_mutex_unlock(&a);
	if (sx == 0)
		return arg;
	pthread_mutex_lock(&b);
	int sy = y;
	pthread_mutex_unlock(&b);
	assert(sy == sx + 1);
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40;
	if (n < 1 || n >= MAXN)
		return 2;
	pthread_t t[MAXN];
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, writer, NULL);
	pthread_create(&t[n], NULL, reader, NULL);
	for (int i = 0; i <= n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
