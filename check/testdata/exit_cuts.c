/*
 * exit_cuts: main starts three threads that each increment a global
 * 1,000 times, racing, and returns without joining them. Where main's
 * exit comes first the execution has a handful of PPs; where the threads
 * run first, with a data-race PP at each load and store of x, it has
 * 6,000. A correct program: nothing here is an infinite loop.
 */
#include <pthread.h>

static volatile int x;

static void *worker(void *arg)
{
	for (int i = 0; i < 1000; i++)
		x = x + 1;
	return arg;
}

int main(void)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	return 0;
}
