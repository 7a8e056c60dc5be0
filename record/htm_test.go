package record

import "testing"

// TestAbortText: statuses as GCC's rtmintrin.h defines their bits
// (_XABORT_EXPLICIT 1<<0, RETRY 1<<1, CONFLICT 1<<2, CAPACITY 1<<3,
// DEBUG 1<<4, NESTED 1<<5, _XABORT_CODE(x) = x>>24 & 0xFF).
func TestAbortText(t *testing.T) {
	for status, want := range map[uint64]string{
		0x2:             "RETRY",
		0x4:             "CONFLICT",
		0x8:             "CAPACITY",
		0x2a<<24 | 0x1:  "EXPLICIT 0x2a",
		0x6:             "RETRY|CONFLICT",
		0x20:            "NESTED",
		0:               "no reason given (status 0x0)",
		0x7f<<24 | 0x11: "EXPLICIT|DEBUG 0x7f",
	} {
		if got := AbortText(status); got != want {
			t.Errorf("AbortText(%#x) = %q, want %q", status, got, want)
		}
	}
}
