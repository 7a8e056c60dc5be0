/* syscall.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_SYSCALL_H
#define _LS_CXX_SYSCALL_H
extern "C" {
#include_next <syscall.h>
}
#endif
