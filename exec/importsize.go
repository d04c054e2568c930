package exec

import "os"

// fileSize is an import's input size for the progress line's ETA; 0 (not
// known) for stdin or a file that cannot be stat'ed (its open says why).
func fileSize(path string, stdin bool) int64 {
	if stdin {
		return 0
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return fi.Size()
}
