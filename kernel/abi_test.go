package kernel

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestABIMatchesHeader parses the C header the SDK compiles against and
// checks every number against the Go constants.
func TestABIMatchesHeader(t *testing.T) {
	var src []byte
	for _, h := range []string{"landslide_abi.h", "landslide_posix_abi.h"} {
		b, err := os.ReadFile(filepath.Join("..", "sdk", "include", h))
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	want := map[string]int{
		"WRITE": SysWrite, "EXIT": SysExit, "EXIT_GROUP": SysExitGroup, "GETTID": SysGettid,
		"YIELD": SysYield, "DESCHEDULE": SysDeschedule, "MAKE_RUNNABLE": SysMakeRunnable,
		"GET_TICKS": SysGetTicks, "SLEEP": SysSleep, "THREAD_FORK": SysThreadFork,
		"THREAD_CREATE": SysThreadCreate, "VANISH": SysVanish, "SET_STATUS": SysSetStatus,
		"TASK_VANISH": SysTaskVanish, "NEW_PAGES": SysNewPages, "REMOVE_PAGES": SysRemovePages,
		"PRINT": SysPrint, "PANIC": SysPanic, "HALT": SysHalt, "MALLOC": SysMalloc,
		"CALLOC": SysCalloc, "REALLOC": SysRealloc, "FREE": SysFree, "PREEMPT": SysPreempt,
		"DUMP_STACK": SysDumpStack, "XBEGIN": SysXbegin, "XEND": SysXend, "XABORT": SysXabort, "XTEST": SysXtest,
		"PTHREAD_CREATE": SysPthreadCreate, "PTHREAD_EXIT": SysPthreadExit, "PTHREAD_JOIN": SysPthreadJoin,
		"PTHREAD_DETACH": SysPthreadDetach, "MUTEX_LOCK": SysMutexLock, "MUTEX_TRYLOCK": SysMutexTrylock,
		"MUTEX_UNLOCK": SysMutexUnlock, "MUTEX_DESTROY": SysMutexDestroy, "COND_WAIT": SysCondWait,
		"COND_TIMEDWAIT": SysCondTimedwait, "COND_SIGNAL": SysCondSignal, "COND_BROADCAST": SysCondBroadcast,
		"ASSUME_FALSE": SysAssumeFalse,
		"NONDET":       SysNondet,
		"LINEUP_CALL":  SysLineupCall, "LINEUP_RETURN": SysLineupReturn, "LINEUP_MODE": SysLineupMode,
		"AWAIT": SysAwait,
	}
	re := regexp.MustCompile(`#define LS_SYS_(\w+)\s+(\d+)`)
	seen := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		n, _ := strconv.Atoi(m[2])
		w, ok := want[m[1]]
		if !ok {
			t.Errorf("header defines LS_SYS_%s = %d, unknown to the kernel", m[1], n)
			continue
		}
		if w != n {
			t.Errorf("LS_SYS_%s: header %d, kernel %d", m[1], n, w)
		}
		seen[m[1]] = true
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("kernel syscall %s missing from the header", name)
		}
	}
}
