/*
 * pebbles_htm: a transactional test written as for the original
 * Landslide's TM support (its landslide-friendly-tests): only the Pebbles
 * P2 headers and htm.h, with assert and NULL coming from them as in the
 * Pebbles basecode. Its failure path has the htm1 bug.
 */
#include <htm.h>
#include <syscall.h>
#include <thread.h>

static volatile int x;
static mutex_t m;

static void *worker(void *arg)
{
	if (_xbegin() == _XBEGIN_STARTED) {
		x++;
		_xend();
	} else {
		mutex_lock(&m);
		int before = x;
		x = before + 1;
		assert(x == before + 1);
		mutex_unlock(&m);
	}
	return NULL;
}

int main(void)
{
	thr_init(4096);
	mutex_init(&m);
	int a = thr_create(worker, NULL);
	int b = thr_create(worker, NULL);
	thr_join(a, NULL);
	thr_join(b, NULL);
	return 0;
}
