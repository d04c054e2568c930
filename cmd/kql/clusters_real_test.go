package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// TestRealClusterProfile connects to the real 3-broker Kafka with a cluster
// profile over SASL_SSL (SCRAM-SHA-512, CA from the file, paths relative to
// the profile), and checks that kql.readonly=true refuses a DROP TOPIC with
// nothing sent (no trace line) while the topic stays, and that the same
// statement runs with a profile that is not read-only.
func TestRealClusterProfile(t *testing.T) {
	b := secureCluster(t)
	topic := kafkatest.TopicName(t)
	b.createTopic(t, topic, 3)

	cfg := t.TempDir()
	dir := filepath.Join(cfg, "kql", "clusters")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(b.sec.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	profile := `bootstrap.servers=` + strings.Join(b.sasl, ",") + `
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
    username="` + kafkatest.UserAdmin + `" password="` + b.sec.Users[kafkatest.UserAdmin] + `";
ssl.truststore.type=PEM
ssl.truststore.location=ca.pem
`
	for name, extra := range map[string]string{"prod": "kql.readonly=true\n", "ops": ""} {
		if err := os.WriteFile(filepath.Join(dir, name+".properties"), []byte(profile+extra), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"XDG_CONFIG_HOME": cfg, "HOME": t.TempDir()}

	r := runReal(t, env, "-c", "prod", "--format", "csv", "-e", "SHOW BROKERS; SHOW TOPICS LIKE '"+topic+"'")
	if r.code != 0 || len(regexp.MustCompile(`(?m)^[123],127\.0\.0\.1,`).FindAllString(r.stdout, -1)) != 3 || !strings.Contains(r.stdout, topic+",3,3,") {
		t.Fatalf("-c prod must reach all 3 brokers and list the topic:\n%s", r)
	}
	b.noSecret(t, "-c prod", r.stdout+r.stderr)

	r = runReal(t, env, "-c", "prod", "--trace", "-e", "DROP TOPIC "+topic)
	if r.code != exitFailed || !strings.Contains(r.stderr, `refused, nothing was sent: it writes to the cluster and the cluster profile "prod" is read-only`) || strings.Contains(r.stderr, "trace:") {
		t.Fatalf("the read-only profile must refuse the DROP and send nothing:\n%s", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if td, err := b.admin(t).ListTopics(ctx, topic); err != nil || !td.Has(topic) {
		t.Fatalf("the refused DROP removed the topic: %v %v", td, err)
	}

	r = runReal(t, env, "-c", "ops", "--trace", "-e", "DROP TOPIC "+topic)
	if r.code != 0 || !strings.Contains(r.stderr, "trace: DeleteTopics -> broker ") {
		t.Fatalf("a profile without kql.readonly runs the DROP:\n%s", r)
	}
}
