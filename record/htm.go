package record

// _xbegin's results, as GCC's RTM intrinsics define them (sdk's htm.h
// has the same values): XbeginStarted, or an abort status whose bits say
// why, with _xabort's argument in bits 24-31.
const (
	XbeginStarted  = 0xFFFFFFFF
	XabortExplicit = 1 << 0
	XabortRetry    = 1 << 1
	XabortConflict = 1 << 2
	XabortCapacity = 1 << 3
	XabortDebug    = 1 << 4
	XabortNested   = 1 << 5
)
