// cxxrt.cc (Landslide guest SDK): what C++ code needs of its runtime,
// linked into a program with C++ sources: operator new and delete on the
// guest's malloc and free, the Itanium ABI's guards for static locals
// (a thread that finds another initialising one yields until it is
// done), pure-virtual calls, and the constructors of global objects, run
// before main (the build links with --wrap=main, so crt0's call of main
// lands in __wrap_main). Global destructors are not run at exit: a
// program's exit ends it, as _exit would; a thread_local object's
// destructor runs when its thread exits (pthread_exit, or the return of
// its start routine: the POSIX library calls ls_cxx_thread_exit), not
// the main thread's at exit, for the same reason. No exceptions, no RTTI.
#include <assert.h>
#include <new>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

namespace std {
const nothrow_t nothrow{};
} // namespace std

static void *allocate(std::size_t n)
{
	void *p = malloc(n != 0 ? n : 1);
	if (p == nullptr)
		panic("operator new: out of memory (%lu bytes)", (unsigned long)n);
	return p;
}

void *operator new(std::size_t n) { return allocate(n); }
void *operator new[](std::size_t n) { return allocate(n); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return malloc(n != 0 ? n : 1); }
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return malloc(n != 0 ? n : 1); }
void operator delete(void *p) noexcept { free(p); }
void operator delete[](void *p) noexcept { free(p); }
void operator delete(void *p, std::size_t) noexcept { free(p); }
void operator delete[](void *p, std::size_t) noexcept { free(p); }

extern "C" {

void __cxa_pure_virtual(void) { panic("pure virtual function called"); }
void __cxa_deleted_virtual(void) { panic("deleted virtual function called"); }

void *__dso_handle = &__dso_handle;

// Global destructors are not run: see the file's comment.
int __cxa_atexit(void (*)(void *), void *, void *) { return 0; }

// The destructors of the calling thread's thread_local objects, in the
// order they were constructed (__cxa_thread_atexit registers each after
// its constructor), run newest first when the thread exits.
namespace {
struct thread_dtor {
	void (*fn)(void *);
	void *obj;
};
constexpr int max_thread_dtors = 64;
thread_local thread_dtor thread_dtors[max_thread_dtors];
thread_local int n_thread_dtors;
} // namespace

int __cxa_thread_atexit(void (*fn)(void *), void *obj, void *)
{
	if (n_thread_dtors == max_thread_dtors)
		panic("__cxa_thread_atexit: more than %d thread_local objects with destructors in one thread", max_thread_dtors);
	thread_dtors[n_thread_dtors++] = {fn, obj};
	return 0;
}

// ls_cxx_thread_exit runs the exiting thread's thread_local destructors
// (the POSIX library's pthread_exit calls it when it is linked). A
// destructor may construct another thread_local object: it runs too.
void ls_cxx_thread_exit(void)
{
	while (n_thread_dtors > 0) {
		thread_dtor d = thread_dtors[--n_thread_dtors];
		d.fn(d.obj);
	}
}

// A static local's guard: its first byte says the object is initialised,
// its second that a thread is initialising it.
int __cxa_guard_acquire(uint64_t *guard)
{
	unsigned char *g = (unsigned char *)guard;
	for (;;) {
		if (__atomic_load_n(&g[0], __ATOMIC_ACQUIRE))
			return 0;
		unsigned char idle = 0;
		if (__atomic_compare_exchange_n(&g[1], &idle, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			if (__atomic_load_n(&g[0], __ATOMIC_ACQUIRE)) {
				__atomic_store_n(&g[1], 0, __ATOMIC_RELEASE);
				return 0;
			}
			return 1;
		}
		sched_yield();
	}
}

void __cxa_guard_release(uint64_t *guard)
{
	unsigned char *g = (unsigned char *)guard;
	__atomic_store_n(&g[0], 1, __ATOMIC_RELEASE);
	__atomic_store_n(&g[1], 0, __ATOMIC_RELEASE);
}

void __cxa_guard_abort(uint64_t *guard)
{
	unsigned char *g = (unsigned char *)guard;
	__atomic_store_n(&g[1], 0, __ATOMIC_RELEASE);
}

extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);
int __real_main(int argc, char **argv);

int __wrap_main(int argc, char **argv)
{
	for (void (**f)(void) = __init_array_start; f != __init_array_end; f++)
		(*f)();
	return __real_main(argc, argv);
}

} // extern "C"
