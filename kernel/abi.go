package kernel

// System-call numbers: the same values as sdk/include/landslide_abi.h
// (TestABIMatchesHeader keeps them in step).
const (
	SysWrite        = 64
	SysExit         = 93
	SysExitGroup    = 94
	SysGettid       = 1000
	SysYield        = 1001
	SysDeschedule   = 1002
	SysMakeRunnable = 1003
	SysGetTicks     = 1004
	SysSleep        = 1005
	SysThreadFork   = 1006
	SysThreadCreate = 1007
	SysVanish       = 1008
	SysSetStatus    = 1009
	SysTaskVanish   = 1010
	SysNewPages     = 1011
	SysRemovePages  = 1012
	SysPrint        = 1013
	SysPanic        = 1014
	SysHalt         = 1015
	SysMalloc       = 1020
	SysCalloc       = 1021
	SysRealloc      = 1022
	SysFree         = 1023
	SysPreempt      = 1030
	SysDumpStack    = 1031
	SysXbegin       = 1040
	SysXend         = 1041
	SysXabort       = 1042
	SysXtest        = 1043

	SysPthreadCreate = 1050
	SysPthreadExit   = 1051
	SysPthreadJoin   = 1052
	SysPthreadDetach = 1053
	SysMutexLock     = 1054
	SysMutexTrylock  = 1055
	SysMutexUnlock   = 1056
	SysMutexDestroy  = 1057
	SysCondWait      = 1058
	SysCondTimedwait = 1059
	SysCondSignal    = 1060
	SysCondBroadcast = 1061
	SysAssumeFalse   = 1062
	SysNondet        = 1063

	SysLineupCall   = 1070
	SysLineupReturn = 1071
	SysLineupMode   = 1072
	SysAwait        = 1073
)

// Guest address-space layout (all below mem.Limit, 2^39).
const (
	NullGuardEnd   = 0x10000        // [0, NullGuardEnd) is never mapped
	HeapBase       = 0x20_0000_0000 // heap arena (kernel-owned, watched)
	HeapLimit      = 0x30_0000_0000
	MainStackTop   = 0x7f_f000_0000 // main thread's stack top
	StackGuardSize = 64 << 10       // faults this close below a stack are overflows
	PageSize       = 4096
)
