/* Plain (non-atomic) shared variables that an optimising compiler may
 * rewrite because the program races on them: at -O1 clang folds
 * "r = r + 1; r = r - 1" into nothing and "y = x; assert(y == x)" into a
 * store of y. TestDefaultBuildKeepsSharedAccesses counts, per thread, the
 * loads and stores of r, x and y that the source makes. */
#include <pthread.h>
#include <assert.h>

int r, x, y;

static void *worker(void *arg)
{
	r = r + 1;       /* r: read, write */
	r = r - 1;       /* r: read, write */
	x = (int)(long)arg; /* x: write */
	y = x;           /* x: read; y: write */
	assert(y == x);  /* y: read; x: read */
	return arg;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, 0, worker, (void *)1);
	pthread_create(&b, 0, worker, (void *)2);
	pthread_join(a, 0);
	pthread_join(b, 0);
	return 0;
}
