/*
 * pg2: paraguay's first half (the waiter's first cond_wait, the signaller's
 * unsynchronised cond_signal, the cv0 handshake) plus a cond_signal from
 * main under the mutex.
 * Written for bench/cmd/classcmp (optimal DPOR against the dpor
 * strategy); main prints the shared variables at its end.
 */
#include <assert.h>
#include <cond.h>
#include <landslide.h>
#include <mutex.h>
#include <stdio.h>
#include <syscall.h>
#include <thread.h>
LANDSLIDE_CONFIG("without thr_create");
LANDSLIDE_CONFIG("without thr_exit");
LANDSLIDE_CONFIG("without thr_join");
static mutex_t m;
static cond_t cv0, cv1;
static int waiting1, woke1;
static void *waiter(void *arg)
{
	mutex_lock(&m);
	waiting1 = 1;
	cond_signal(&cv0);
	cond_wait(&cv1, &m);
	woke1 = 1;
	mutex_unlock(&m);
	return arg;
}
static void *signaller(void *arg)
{
	int again;
	cond_signal(&cv1);
	mutex_lock(&m);
	while (!waiting1)
		cond_wait(&cv0, &m);
	again = !woke1;
	mutex_unlock(&m);
	if (again)
		cond_signal(&cv1);
	return arg;
}
int main(void)
{
	int w, s;
	thr_init(4096);
	mutex_init(&m);
	cond_init(&cv0);
	cond_init(&cv1);
	w = thr_create(waiter, NULL);
	s = thr_create(signaller, NULL);
	mutex_lock(&m);
	cond_signal(&cv1);
	mutex_unlock(&m);
	thr_join(w, NULL);
	thr_join(s, NULL);
	printf("woke1=%d waiting1=%d\n", woke1, waiting1);
	return 0;
}
