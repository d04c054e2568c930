//go:build !(aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos)

package main

// echoOff leaves the terminal as it is where kql has no termios (Windows):
// readline.ReadPassword turns the console's echo off when it starts reading.
func echoOff(int) (restore func(), err error) { return func() {}, nil }
