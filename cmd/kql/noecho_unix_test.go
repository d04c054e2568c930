//go:build aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos

package main

import "golang.org/x/sys/unix"

// echoing says whether the terminal on fd (either side of a pty) echoes
// what is typed.
func echoing(fd int) (bool, error) {
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return false, err
	}
	return t.Lflag&unix.ECHO != 0, nil
}
