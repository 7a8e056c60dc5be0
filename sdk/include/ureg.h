/*
 * ureg.h: the Pebbles register dump type, for source compatibility of code
 * that installs swexn handlers (swexn is a no-op under Landslide, so no
 * handler ever runs). The field names are Pebbles' x86 ones.
 */
#ifndef _UREG_H
#define _UREG_H

#define SWEXN_CAUSE_DIVIDE     0x00
#define SWEXN_CAUSE_DEBUG      0x01
#define SWEXN_CAUSE_BREAKPOINT 0x03
#define SWEXN_CAUSE_OVERFLOW   0x04
#define SWEXN_CAUSE_BOUNDCHECK 0x05
#define SWEXN_CAUSE_OPCODE     0x06
#define SWEXN_CAUSE_NOFPU      0x07
#define SWEXN_CAUSE_SEGFAULT   0x0B
#define SWEXN_CAUSE_STACKFAULT 0x0C
#define SWEXN_CAUSE_PROTFAULT  0x0D
#define SWEXN_CAUSE_PAGEFAULT  0x0E
#define SWEXN_CAUSE_FPUFAULT   0x10
#define SWEXN_CAUSE_ALIGNFAULT 0x11
#define SWEXN_CAUSE_SIMDFAULT  0x13

typedef struct ureg_t {
	unsigned int cause;
	unsigned int cr2;
	unsigned int ds;
	unsigned int es;
	unsigned int fs;
	unsigned int gs;
	unsigned int edi;
	unsigned int esi;
	unsigned int ebp;
	unsigned int zero;
	unsigned int ebx;
	unsigned int edx;
	unsigned int ecx;
	unsigned int eax;
	unsigned int error_code;
	unsigned int eip;
	unsigned int cs;
	unsigned int eflags;
	unsigned int esp;
	unsigned int ss;
} ureg_t;

#endif /* _UREG_H */
