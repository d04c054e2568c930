package kafkatest

import _ "embed"

// The files the real cluster is made from, compiled into the test bed so
// that it needs no checkout to find them (a test, `go run ./cmd/...` and
// an installed kql-cluster all have them).
var (
	// kafkaPom is the Maven project that fetches Apache Kafka's broker
	// jars and their runtime dependencies (and an slf4j binding).
	//go:embed files/pom.xml
	kafkaPom []byte

	// serverProperties is the template of one node's server.properties.
	//go:embed files/server.properties.tmpl
	serverProperties string

	// log4j2XML sends each node's log to its server.log.
	//go:embed files/log4j2.xml
	log4j2XML []byte
)
