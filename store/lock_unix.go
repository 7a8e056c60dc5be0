//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockDir takes the workspace lock: flock(2) on LockFile, exclusive for a
// writer (which writes its pid into the file), shared for a reader. The
// lock belongs to the open file description, so it also excludes a second
// Store in the same process, and the kernel drops it when the process
// dies (kill -9 included).
func lockDir(dir string, ro bool) (*os.File, error) {
	path := lockPath(dir)
	var f *os.File
	var err error
	if ro {
		f, err = os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				// A store on a read-only file system (or in a directory
				// we cannot write) without a lock file: no writer can
				// be using it either.
				return nil, nil
			}
		}
	} else {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("lock workspace %s: %w", dir, err)
	}
	how := syscall.LOCK_EX
	if ro {
		how = syscall.LOCK_SH
	}
	for {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("workspace %s is in use by another landslide process%s: %w", dir, holder(f), ErrLocked)
		}
		return nil, fmt.Errorf("lock workspace %s: %w", dir, err)
	}
	if !ro {
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
	}
	return f, nil
}

// holder names the pid in the lock file, if that process is alive.
func holder(f *os.File) string {
	if pid := filePID(f); pid != 0 {
		return fmt.Sprintf(" (pid %d)", pid)
	}
	return ""
}

// filePID is the pid written in an open lock file, if that process is
// alive (0 otherwise).
func filePID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return 0
	}
	return pid
}

// lockPID is the pid of the live writer named in dir's lock file (0 if
// none).
func lockPID(dir string) int {
	f, err := os.Open(lockPath(dir))
	if err != nil {
		return 0
	}
	defer f.Close()
	return filePID(f)
}

// unlockDir releases the lock; a writer first empties the pid.
func unlockDir(f *os.File, writer bool) {
	if f == nil {
		return
	}
	if writer {
		_ = f.Truncate(0)
	}
	_ = f.Close()
}
