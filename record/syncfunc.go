package record

// SyncFunc is a function of the synchronisation API (the P2 thread
// library) that the kernel watches: its entry and return are sync events
// (SyncEnter, SyncReturn) carrying the function as this typed value. This
// is the one list of those names; the kernel finds them in the program,
// the race analysis classifies them, reports print them.
type SyncFunc uint8

// The synchronisation API.
const (
	NoSyncFunc SyncFunc = iota // not a sync function (events other than enter/return)
	MutexInit
	MutexDestroy
	MutexLock
	MutexUnlock
	CondInit
	CondDestroy
	CondWait
	CondSignal
	CondBroadcast
	SemInit
	SemDestroy
	SemWait
	SemSignal
	RwlockInit
	RwlockDestroy
	RwlockLock
	RwlockUnlock
	RwlockDowngrade
	ThrInit
	ThrCreate
	ThrJoin
	ThrExit
	numSyncFuncs
)

var syncFuncNames = [numSyncFuncs]string{
	MutexInit: "mutex_init", MutexDestroy: "mutex_destroy", MutexLock: "mutex_lock", MutexUnlock: "mutex_unlock",
	CondInit: "cond_init", CondDestroy: "cond_destroy", CondWait: "cond_wait", CondSignal: "cond_signal", CondBroadcast: "cond_broadcast",
	SemInit: "sem_init", SemDestroy: "sem_destroy", SemWait: "sem_wait", SemSignal: "sem_signal",
	RwlockInit: "rwlock_init", RwlockDestroy: "rwlock_destroy", RwlockLock: "rwlock_lock", RwlockUnlock: "rwlock_unlock",
	RwlockDowngrade: "rwlock_downgrade",
	ThrInit:         "thr_init", ThrCreate: "thr_create", ThrJoin: "thr_join", ThrExit: "thr_exit",
}

// String is the function's name in the program ("" for NoSyncFunc).
func (f SyncFunc) String() string {
	if f < numSyncFuncs {
		return syncFuncNames[f]
	}
	return "?"
}

// SyncFuncNamed is the sync function with this name, if it is one.
func SyncFuncNamed(name string) (SyncFunc, bool) {
	for f := MutexInit; f < numSyncFuncs; f++ {
		if syncFuncNames[f] == name {
			return f, true
		}
	}
	return NoSyncFunc, name == ""
}

// SyncFuncs lists the synchronisation API, in the order above.
func SyncFuncs() []SyncFunc {
	out := make([]SyncFunc, 0, numSyncFuncs-1)
	for f := MutexInit; f < numSyncFuncs; f++ {
		out = append(out, f)
	}
	return out
}
