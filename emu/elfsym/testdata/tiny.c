/* tiny.c: the seed binary for FuzzLoad and the loader tests.
 * Rebuild tiny.elf from this directory with:
 *   clang --target=riscv64-unknown-elf -march=rv64ima -mabi=lp64 -g -O1 \
 *     -fno-omit-frame-pointer -ffreestanding -nostdlib -fuse-ld=lld \
 *     -Wl,--build-id=none -fdebug-compilation-dir=. tiny.c -o tiny.elf
 */
int counter = 1;
static int table[8];

__attribute__((noinline)) int add(int a, int b) { return a + b; }

void _start(void) {
	for (int i = 0; i < 8; i++)
		table[i] = add(i, counter);
	register long a0 asm("a0") = table[7];
	register long a7 asm("a7") = 93; /* exit */
	asm volatile("ecall" : : "r"(a0), "r"(a7));
	for (;;)
		;
}
