//go:build race

package exec

// raceBuild is true when the race detector is on: it makes a record path
// several times slower, so load tests read fewer records.
const raceBuild = true
