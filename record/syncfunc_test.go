package record

import "testing"

// TestSyncFuncNames: every sync function has a distinct name that reads
// back to it; the empty name is NoSyncFunc, any other is not a sync
// function.
func TestSyncFuncNames(t *testing.T) {
	seen := map[string]bool{}
	fs := SyncFuncs()
	if len(fs) != 22 || fs[0] != MutexInit || fs[len(fs)-1] != ThrExit {
		t.Fatalf("SyncFuncs = %v", fs)
	}
	for _, f := range fs {
		name := f.String()
		if name == "" || seen[name] {
			t.Errorf("%d: name %q empty or repeated", f, name)
		}
		seen[name] = true
		if g, ok := SyncFuncNamed(name); !ok || g != f {
			t.Errorf("SyncFuncNamed(%q) = %v, %v; want %d", name, g, ok, f)
		}
	}
	if MutexLock.String() != "mutex_lock" || CondBroadcast.String() != "cond_broadcast" || ThrJoin.String() != "thr_join" {
		t.Errorf("names: %s %s %s", MutexLock, CondBroadcast, ThrJoin)
	}
	if f, ok := SyncFuncNamed(""); !ok || f != NoSyncFunc || NoSyncFunc.String() != "" {
		t.Errorf("the empty name: %v, %v", f, ok)
	}
	if _, ok := SyncFuncNamed("pthread_mutex_lock"); ok {
		t.Error("pthread_mutex_lock is not a P2 sync function")
	}
	if s := SyncFunc(200).String(); s != "?" {
		t.Errorf("an invalid value prints %q", s)
	}
}
