/*
 * errno.c (Landslide guest SDK): glibc's errno, which its headers read
 * and write through __errno_location() (errno.h: "#define errno
 * (*__errno_location ())"): one per thread, in thread-local storage
 * (kernel/tls.go). The SDK's own functions never set it. Linked only into
 * a program that names __errno_location (sdk.Build).
 */
static __thread int errno_value;

int *__errno_location(void)
{
	return &errno_value;
}
