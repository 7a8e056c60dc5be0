//go:build unix

package testutil

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a process group of its own, and makes the
// context's cancellation kill the whole group (a browser forks helpers).
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		killProcessGroup(cmd)
		return nil
	}
}

// killProcessGroup kills what is left of cmd's process group. A group's
// id is not reused while any member lives, and Linux hands out pids
// cyclically, so right after Wait this reaches only processes cmd started.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
