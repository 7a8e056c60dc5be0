/* stdatomic.h (Landslide guest SDK, C++): C's atomics are C; C++ programs include <atomic>. */
#error "stdatomic.h is the guest SDK's C header: in C++ include <atomic>"
