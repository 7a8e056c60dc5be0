/* multi: sources in several directories, built from testdata/ as
 *   clang ... multi/main.c multi/lib/helper.c -Imulti/include
 * so DWARF records the paths relative to testdata/. */
#include "twice.h"

void _start(void)
{
	register long a0 __asm__("a0") = helper(twice(20));
	register long a7 __asm__("a7") = 93; /* exit */
	__asm__ volatile("ecall" : : "r"(a0), "r"(a7));
	for (;;)
		;
}
