//go:build !linux

package jsontext

import "testing"

// reportCPU reports nothing where the thread's CPU time is not known.
func reportCPU(*testing.B) func() { return func() {} }
