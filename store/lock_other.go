//go:build !unix

package store

import "os"

// lockDir: workspace locking needs flock(2); elsewhere Pebble's own
// directory lock is the only guard.
func lockDir(dir string, ro bool) (*os.File, error) { return nil, nil }

func unlockDir(f *os.File, writer bool) {
	if f != nil {
		_ = f.Close()
	}
}

func lockPID(dir string) int { return 0 }
