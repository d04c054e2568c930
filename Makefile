# kql: an interactive KafkaQL shell for Apache Kafka.
#
#   make test        the test command (CI runs exactly this): installs or checks
#                    the prerequisites, fetches Kafka, go vet, then every test
#                    with -race, on kfake and on a real 3-broker Kafka cluster
#   make build       bin/kql
#   make test-versions   the real-Kafka suite on the oldest and newest 4.x
#                    releases on Maven Central (KAFKA_VERSIONS), not in make test
#   make cluster     a real 3-broker Kafka cluster in the foreground (Ctrl-C stops it);
#                    CLUSTERFLAGS passes flags, e.g. CLUSTERFLAGS=-registry also
#                    starts the test bed's schema registry and prints its URL
#   make cluster-secure  the same with SASL_SSL, mTLS and ACLs, and ready-made
#                    client.properties files
#   make bench       the record-path benchmark (issues 9, 10): a bare franz-go consumer,
#                    kql in each format and kcat, and Avro values read raw and
#                    decoded through an in-process schema registry, as separate
#                    processes, on an in-process 3-broker kfake; BENCHFLAGS passes flags, e.g.
#                    BENCHFLAGS='-runs 9 -flat=false' (see kql-bench -h)
#   make bench-real  the same on the real 3-broker Kafka cluster of `make cluster`,
#                    started for the run and stopped after it
#   make bench-go    the go test benchmarks (-bench . -benchmem)
#   make fuzz        the parser fuzzers, FUZZTIME each (default 10m), and the
#                    query differential test against SQLite on a fresh seed
#   make deps        only the prerequisites: Go, Java 17+, Maven, MIT Kerberos's
#                    KDC (krb5-kdc, krb5-admin-server, krb5-user), the Kafka jars
#                    and the schema registry the tests run (Apicurio Registry)

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO        ?= go
FUZZTIME  ?= 10m
# How many random queries make fuzz checks against SQLite, on a fresh seed
# (the test prints it; KQL_DIFF_SEED=<seed> reruns them).
FUZZQUERIES ?= 5000
# The real suite starts a 3-JVM cluster per test binary that uses it; on two
# cores a whole run takes minutes, so the timeout is generous.
TESTTIMEOUT ?= 30m
export KQL_KAFKA_VERSION ?= 4.3.1
# The oldest and newest Apache Kafka 4.x releases Maven Central served when
# last checked (mvn dependency:get ...:LATEST and its maven-metadata.xml).
KAFKA_VERSIONS ?= 4.0.0 4.4.0
# The packages whose tests use the real cluster. test-versions shows each
# cluster's start line (it names the Kafka version), failures and results.
REAL_PKGS := ./kafka/kafkatest/... ./exec/... ./cmd/kql/...

BENCHFLAGS ?=
CLUSTERFLAGS ?=

.PHONY: all test test-versions deps vet bench bench-real bench-go fuzz cluster cluster-secure build clean

all: build

build:
	$(GO) build -o bin/kql ./cmd/kql

# The run id marks every process this run starts (the JVMs inherit it), so
# the leak check afterwards finds this run's JVMs and nobody else's.
# Everything runs, the long fault tests too (brokers killed, hung and moved
# under running statements): a real-Kafka test that is skipped proves nothing.
test: deps vet
	@$(call gotest,-race -count=1 -timeout $(TESTTIMEOUT) -v ./...)

test-versions: deps
	@for v in $(KAFKA_VERSIONS); do \
		echo "=== Apache Kafka $$v"; \
		$(GO) run ./cmd/kql-cluster -fetch-only -version $$v || exit 1; \
		start=$$(date +%s); \
		log=$${TMPDIR:-/tmp}/kql-test-versions-$$v.log; \
		( export KQL_KAFKA_VERSION=$$v KQL_BACKENDS=kafka; $(call gotest,-v -short -count=1 -timeout $(TESTTIMEOUT) $(REAL_PKGS)) ) 2>&1 | tee $$log | \
			grep --line-buffered -E '^(ok|FAIL|--- FAIL|panic|make: |go test )|kafkatest: (Apache Kafka|stopped)' || { echo "Apache Kafka $$v: failed; the whole output is in $$log" >&2; exit 1; }; \
		echo "=== Apache Kafka $$v: passed in $$(( $$(date +%s) - start ))s"; \
	done

# gotest runs go test with a run id that marks every process the run starts
# (the JVMs inherit it), then fails if any of them outlived it.
define gotest
run="$$$$-$$(date +%s%N)"; \
	echo "$(GO) test $(1)"; \
	rc=0; KQL_TEST_RUN=$$run $(GO) test $(1) || rc=$$?; \
	leftover() { grep -lsz "^KQL_TEST_RUN=$$run\$$" /proc/[0-9]*/environ | cut -d/ -f3 | tr '\n' ' ' || true; }; \
	left=$$(leftover); if [ -n "$$left" ]; then sleep 3; left=$$(leftover); fi; \
	if [ -n "$$left" ]; then echo "make: processes of this test run outlived it (pids $$left): a JVM leak in kafka/kafkatest" >&2; exit 1; fi; \
	exit $$rc
endef

vet:
	$(GO) vet ./...

# deps installs what the tests need when it can (Debian/Ubuntu, as root) and
# otherwise says exactly what to install. It never lets the real-Kafka suite
# be skipped: a missing prerequisite stops `make test` here.
deps:
	@command -v $(GO) >/dev/null || { echo "make deps: Go is not installed: install Go 1.26 or newer from https://go.dev/dl/" >&2; exit 1; }
	@need=""; \
	java_ok() { j=java; if [ -x "$${JAVA_HOME:-/nonexistent}/bin/java" ]; then j="$$JAVA_HOME/bin/java"; fi; \
		command -v "$$j" >/dev/null && \
		[ "$$("$$j" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p' | cut -d. -f1)" -ge 17 ] 2>/dev/null; }; \
	java_ok || need="$$need openjdk-17-jdk-headless"; \
	command -v mvn >/dev/null || need="$$need maven"; \
	krb() { PATH="$$PATH:/usr/sbin:/sbin" command -v "$$1" >/dev/null; }; \
	krb krb5kdc && krb kdb5_util || need="$$need krb5-kdc"; \
	krb kadmin.local || need="$$need krb5-admin-server"; \
	krb kinit || need="$$need krb5-user"; \
	if [ -n "$$need" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "make deps: installing$$need (apt-get)"; \
			apt-get update -qq; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$need >/dev/null; \
		else \
			echo "make deps: the real-Kafka tests need Java 17+, Maven and MIT Kerberos (a KDC for the GSSAPI tests); missing:$$need." >&2; \
			echo "  Debian/Ubuntu: sudo apt-get install$$need" >&2; \
			echo "  elsewhere: install a JDK 17 or newer (java on PATH or JAVA_HOME), Apache Maven (mvn on PATH) and MIT Kerberos's krb5kdc, kdb5_util, kadmin.local and kinit" >&2; \
			exit 1; \
		fi; \
		java_ok || { echo "make deps: java is still missing or older than 17 after installing: check 'java -version' and JAVA_HOME" >&2; exit 1; }; \
		command -v mvn >/dev/null || { echo "make deps: mvn is still missing after installing maven" >&2; exit 1; }; \
		krb krb5kdc && krb kadmin.local && krb kinit || { echo "make deps: krb5kdc, kadmin.local or kinit is still missing after installing MIT Kerberos" >&2; exit 1; }; \
	fi
	$(GO) run ./cmd/kql-cluster -fetch-only

bench:
	$(GO) run ./cmd/kql-bench $(BENCHFLAGS)

bench-real:
	$(GO) run ./cmd/kql-bench -real $(BENCHFLAGS)

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fuzz:
	$(GO) test ./lang -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lang -run '^$$' -fuzz '^FuzzQuoteRoundTrip$$' -fuzztime $(FUZZTIME)
	KQL_BACKENDS=kfake KQL_DIFF_SEED=random KQL_DIFF_QUERIES=$(FUZZQUERIES) $(GO) test ./exec -count=1 -v -run '^TestQueriesAgreeWithSQLite$$'

cluster:
	$(GO) build -o bin/kql-cluster ./cmd/kql-cluster
	exec bin/kql-cluster $(CLUSTERFLAGS)

cluster-secure:
	$(GO) build -o bin/kql-cluster ./cmd/kql-cluster
	exec bin/kql-cluster -secure $(CLUSTERFLAGS)

clean:
	rm -rf bin
