package main

// The shell's view of the language, renderer and history packages, in one
// place, so the rest of cmd/kql reads the same whatever their exact shapes.

// stmtBuffer collects REPL lines until they hold complete statements.
type stmtBuffer interface {
	Add(line string)
	Complete() bool
	Take() []source
	Empty() bool
	Reset()
	Pending() string
}

// helpEntry is one statement's help: name, syntax and an example.
type helpEntry struct{ Name, Syntax, Example string }

// renderOptions is what the shell tells the renderer.
type renderOptions struct {
	Format    outputFormat
	Width     int
	Color     bool
	BatchSize int
	Footer    bool
}

// historyStore is the REPL history file.
type historyStore interface {
	Add(entry string) error
	Entries() []string
	Close() error
}
