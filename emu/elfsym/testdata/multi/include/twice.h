/* An inline function from a header: its code is attributed to this file. */
static inline __attribute__((always_inline)) int twice(int x)
{
	return x + x;
}
int helper(int x);
