/*
 * directives.c: a program with a .landslide directive section, as the
 * SDK's LANDSLIDE_CONFIG writes it (landslide.h), in two objects' worth of
 * pieces. -DBAD=n gives the malformed variants the loader must reject.
 */
#define SECTION ".pushsection .landslide,\"\",@progbits\n"
#define END "\n.popsection"

#if !defined(BAD)
__asm__(SECTION ".asciz \"without thr_create\"" END);
__asm__(SECTION ".byte 0" END); /* padding: an empty line, skipped */
__asm__(SECTION ".asciz \"within  main\"" END);
#elif BAD == 1 /* loaded into memory */
__asm__(".pushsection .landslide,\"a\",@progbits\n.asciz \"without f\"" END);
#elif BAD == 2 /* not NUL-terminated */
__asm__(SECTION ".ascii \"without f\"" END);
#elif BAD == 3 /* a control character */
__asm__(SECTION ".asciz \"without\\tf\"" END);
#endif

void _start(void)
{
	for (;;)
		;
}
