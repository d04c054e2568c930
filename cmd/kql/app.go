package main

import (
	"fmt"
	"io"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "0.1.0-dev"

// Main runs kql with injected streams and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	for _, a := range args {
		switch a {
		case "--version":
			fmt.Fprintf(stdout, "kql %s\n", Version)
			return 0
		case "--help", "-h":
			fmt.Fprintln(stdout, "usage: kql [flags]")
			return 0
		}
	}
	fmt.Fprintln(stderr, "kql: not implemented yet")
	return 2
}
