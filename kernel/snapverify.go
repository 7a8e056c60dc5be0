package kernel

import (
	"fmt"
	"reflect"
	"testing"
)

// verifySnapshots makes every Snapshot keep a copy of its threads and
// every Restore check that none was written since: the threads are
// shared between the live state and its snapshots until written
// (Kernel.own), and a write that bypassed own would change a snapshot's
// past silently. It is on in every test binary.
var verifySnapshots = testing.Testing()

func freeze(ts []*thread) []thread {
	out := make([]thread, len(ts))
	for i, t := range ts {
		out[i] = *t
	}
	return out
}

// verify panics if a thread of the snapshot changed since it was taken:
// a bug of the kernel's, never the guest's.
func (sn *snapshot) verify() {
	for i, t := range sn.st.threads {
		if !shallowEqual(reflect.ValueOf(t).Elem(), reflect.ValueOf(&sn.frozen[i]).Elem()) {
			panic(fmt.Sprintf("kernel: thread %d of a snapshot was written after it was taken (a write not through Kernel.own)", t.tid))
		}
	}
}

// shallowEqual compares a and b field by field, slices and pointers by
// what they point at (a thread's slices are replaced, never written in
// place).
func shallowEqual(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if !shallowEqual(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range a.Len() {
			if !shallowEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		return a.Len() == b.Len() && a.Cap() == b.Cap() && (a.Len() == 0 || a.Pointer() == b.Pointer())
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.Pointer() == b.Pointer()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.String:
		return a.String() == b.String()
	case reflect.Interface:
		return a.IsNil() == b.IsNil() && (a.IsNil() || shallowEqual(a.Elem(), b.Elem()))
	}
	panic(fmt.Sprintf("kernel: shallowEqual of a %s", a.Kind()))
}
