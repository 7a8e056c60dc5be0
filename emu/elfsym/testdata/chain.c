/* chain.c: the call chain _start -> main -> vla -> big -> vsum -> f -> g ->
 * leaf (plus a frameless assembly leaf) for the symbol, line and unwinding
 * tests, which build it with clang at test time. Each function has a
 * different frame: leaf and main the minimal one, g and f save extra
 * registers, big needs more than 2 KiB (a two-step sp adjustment), vla
 * restores sp from s0, and the variadic vsum keeps its register save area
 * above s0 (so s0 is 64 bytes below the caller's sp).
 */
static volatile int sink;
int counter;
struct pair {
	long a, b;
} pairs[3];

__attribute__((noinline)) int leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int g(int x)
{
	int a[4];
	for (int i = 0; i < 4; i++)
		a[i] = leaf(x + i);
	sink = a[x & 3];
	return a[1] + a[2];
}

__attribute__((noinline)) int f(int x)
{
	int r = g(x);
	return r + g(x + 1);
}

__attribute__((noinline)) int vsum(int n, ...)
{
	__builtin_va_list ap;
	__builtin_va_start(ap, n);
	int s = 0;
	for (int i = 0; i < n; i++)
		s += __builtin_va_arg(ap, int);
	__builtin_va_end(ap);
	return f(s);
}

__attribute__((noinline)) int big(int x)
{
	volatile char buf[5000];
	buf[x] = 1;
	return vsum(2, buf[x + 1], x) + vsum(0);
}

__attribute__((noinline)) int vla(int n)
{
	volatile char b[n];
	b[0] = 1;
	return big(b[n - 1] + n);
}

/* A leaf without a frame, as hand-written assembly would be. */
__attribute__((naked, noinline)) int asm_leaf(int x)
{
	__asm__ volatile("addi a0, a0, 1\n\tret");
}

__attribute__((noinline)) int main(void)
{
	counter = vla(5);
	counter += asm_leaf(counter);
	pairs[1].b = counter;
	return counter & 0x7f;
}

void _start(void)
{
	register long a0 __asm__("a0") = main();
	register long a7 __asm__("a7") = 93; /* exit */
	__asm__ volatile("ecall" : : "r"(a0), "r"(a7));
	for (;;)
		;
}
