/*
 * cas_log: two threads each take TICKETS tickets from a counter with a
 * compare-and-swap loop (an LR/SC pair on RISC-V) and write their id into
 * the log slot of each ticket; main prints the log: each order of the
 * increments is an outcome.
 */
#include <pthread.h>
#include <stdio.h>

#define TICKETS 1

static int counter;
static volatile int slots[4];

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	for (int i = 0; i < TICKETS; i++) {
		int old = __atomic_load_n(&counter, __ATOMIC_SEQ_CST);
		while (!__atomic_compare_exchange_n(&counter, &old, old + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			;
		slots[old] = id;
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, worker, (void *)1L);
	pthread_create(&b, NULL, worker, (void *)2L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%d%d%d%d\n", slots[0], slots[1], slots[2], slots[3]);
	return 0;
}
