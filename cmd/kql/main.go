// Command kql is an interactive KafkaQL shell for Apache Kafka.
package main

import "os"

func main() {
	stop := startProfiles(os.Getenv)
	code := Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
