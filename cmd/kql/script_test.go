package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/schema"
)

// TestMain lets testscript run the real kql command: the test binary,
// installed on $PATH as "kql", runs Main when invoked under that name.
//
// The package's tests on real Kafka (secure_test.go, faults_test.go) share
// one cluster, torn down by kafkatest.Run when the tests end.
func TestMain(m *testing.M) {
	testscript.Main(withRealCluster{m}, map[string]func(){
		"kql": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

type withRealCluster struct{ m *testing.M }

func (w withRealCluster) Run() int { return kafkatest.Run(w.m) }

var updateScripts = flag.Bool("update", false, "rewrite the files that cmp compares in testdata/script/*.txtar (review the diff)")

type clusterKey struct{}

// registriesKey holds a script's schema registries by name: what the avro
// command needs to register and encode with them.
type registriesKey struct{}

type scriptRegistry struct {
	fake *srfake.Registry
	cfg  schema.Config // how to reach it, credentials and CA included
}

// TestScripts runs testdata/script/*.txtar. Each script gets its own
// 3-broker kfake cluster in $KQL_BOOTSTRAP, and these commands:
//
//	topic NAME PARTITIONS [key=value ...]   create a topic
//	produce TOPIC N                         N records: key kI, value {"n":I}, header h=I, time 2024-01-01T00:00:00Z + I s
//	commit GROUP TOPIC PARTITION OFFSET     commit a group offset
//	exits CODE COMMAND [ARGS...]            run COMMAND (as exec does) and require exit code CODE
//	cluster NAME [sasl MECHANISM USER PASS] [tls|mtls]
//	                                        start another cluster: $NAME_BOOTSTRAP; with tls or mtls (client
//	                                        certificates required) $WORK/NAME-ca.pem, NAME-cert.pem, NAME-key.pem
//	registry NAME [basic USER PASS | bearer TOKEN] [tls]
//	                                        start a schema registry (srfake) wanting those credentials: $NAME_URL,
//	                                        and $WORK/NAME.properties with schema.registry.url, the credentials and,
//	                                        with tls, schema.registry.ssl.truststore.location=NAME-ca.pem
//	profile NAME [key=value ...]            write the cluster profile $XDG_CONFIG_HOME/kql/clusters/NAME.properties
//	avro REGISTRY TOPIC N                   register an Avro record {n: long, amount: decimal(9,2)} as TOPIC-value
//	                                        and produce N records: key kI, value {"n":I,"amount":I.50} encoded with it
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		UpdateScripts:       *updateScripts,
		Setup: func(env *testscript.Env) error {
			c, err := kfake.NewCluster(kfake.NumBrokers(3))
			if err != nil {
				return err
			}
			env.Defer(c.Close)
			env.Values[clusterKey{}] = c
			env.Values[registriesKey{}] = map[string]*scriptRegistry{}
			env.Setenv("KQL_BOOTSTRAP", strings.Join(c.ListenAddrs(), ","))
			env.Setenv("NO_COLOR", "")
			// Scripts read the playground's data as seeded, never moving
			// (playground.txtar turns the traffic on where it shows it).
			env.Setenv("KQL_PLAYGROUND_STATIC", "1")
			env.Setenv("HOME", env.WorkDir) // a history file never lands in the real home
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".state"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"topic":    cmdTopic,
			"produce":  cmdProduce,
			"commit":   cmdCommit,
			"cluster":  cmdCluster,
			"exits":    cmdExits,
			"registry": cmdRegistry,
			"avro":     cmdAvro,
			"profile":  cmdProfile,
			"protoset": cmdProtoset,
		},
	})
}

func scriptCluster(ts *testscript.TestScript) *kfake.Cluster {
	return ts.Value(clusterKey{}).(*kfake.Cluster)
}

func cmdTopic(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: topic NAME PARTITIONS [key=value ...]")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	cfg := map[string]string{}
	for _, kv := range args[2:] {
		k, v, _ := strings.Cut(kv, "=")
		cfg[k] = v
	}
	ts.Check(scriptCluster(ts).CreateTopic(args[0], int32(n), cfg))
}

// scriptBase is the timestamp of the first record produce writes.
var scriptBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func scriptRecord(topic string, i int) *kgo.Record {
	return &kgo.Record{
		Topic:     topic,
		Key:       []byte(fmt.Sprintf("k%d", i)),
		Value:     []byte(fmt.Sprintf(`{"n":%d}`, i)),
		Headers:   []kgo.RecordHeader{{Key: "h", Value: []byte(strconv.Itoa(i))}},
		Timestamp: scriptBase.Add(time.Duration(i) * time.Second),
	}
}

func cmdProduce(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: produce TOPIC N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	cl, err := kgo.NewClient(kgo.SeedBrokers(scriptCluster(ts).ListenAddrs()...))
	ts.Check(err)
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = scriptRecord(args[0], i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts.Check(cl.ProduceSync(ctx, recs...).FirstErr())
}

func cmdCommit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: commit GROUP TOPIC PARTITION OFFSET")
	}
	p, err := strconv.Atoi(args[2])
	ts.Check(err)
	o, err := strconv.ParseInt(args[3], 10, 64)
	ts.Check(err)
	cl, err := kgo.NewClient(kgo.SeedBrokers(scriptCluster(ts).ListenAddrs()...))
	ts.Check(err)
	defer cl.Close()
	var offs kadm.Offsets
	offs.AddOffset(args[1], int32(p), o, -1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CommitOffsets(ctx, args[0], offs)
	ts.Check(err)
	ts.Check(resp.Error())
}

func cmdCluster(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: cluster NAME [sasl MECHANISM USER PASS] [tls]")
	}
	name := args[0]
	opts := []kfake.Opt{kfake.NumBrokers(3)}
	for rest := args[1:]; len(rest) > 0; {
		switch rest[0] {
		case "sasl":
			if len(rest) < 4 {
				ts.Fatalf("sasl needs MECHANISM USER PASS")
			}
			opts = append(opts, kfake.EnableSASL(), kfake.Superuser(rest[1], rest[2], rest[3]))
			rest = rest[4:]
		case "tls", "mtls":
			pki, err := makeTestPKI()
			ts.Check(err)
			ts.Check(os.WriteFile(ts.MkAbs(name+"-ca.pem"), pki.caPEM, 0o644))
			ts.Check(os.WriteFile(ts.MkAbs(name+"-cert.pem"), pki.certPEM, 0o644))
			ts.Check(os.WriteFile(ts.MkAbs(name+"-key.pem"), pki.keyPEM, 0o600))
			cfg := pki.server
			if rest[0] == "mtls" { // brokers demand a client certificate from the CA
				pool := x509.NewCertPool()
				pool.AppendCertsFromPEM(pki.caPEM)
				cfg = cfg.Clone()
				cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
			}
			opts = append(opts, kfake.TLS(cfg))
			rest = rest[1:]
		default:
			ts.Fatalf("unknown cluster option %q", rest[0])
		}
	}
	c, err := kfake.NewCluster(opts...)
	ts.Check(err)
	ts.Defer(c.Close)
	ts.Setenv(strings.ToUpper(name)+"_BOOTSTRAP", strings.Join(c.ListenAddrs(), ","))
}

func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *osexec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

func cmdRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: registry NAME [basic USER PASS | bearer TOKEN] [tls | mtls]")
	}
	name := args[0]
	var opts []srfake.Option
	props := ""
	cfg := schema.Config{}
	useTLS, useMTLS := false, false
	for rest := args[1:]; len(rest) > 0; {
		switch rest[0] {
		case "basic":
			if len(rest) < 3 {
				ts.Fatalf("basic needs USER PASS")
			}
			opts = append(opts, srfake.WithAuth("Basic "+base64.StdEncoding.EncodeToString([]byte(rest[1]+":"+rest[2]))))
			props += "basic.auth.credentials.source=USER_INFO\nbasic.auth.user.info=" + rest[1] + ":" + rest[2] + "\n"
			cfg.User, cfg.Password = rest[1], rest[2]
			rest = rest[3:]
		case "bearer":
			if len(rest) < 2 {
				ts.Fatalf("bearer needs TOKEN")
			}
			opts = append(opts, srfake.WithAuth("Bearer "+rest[1]))
			props += "bearer.auth.credentials.source=STATIC_TOKEN\nbearer.auth.token=" + rest[1] + "\n"
			cfg.BearerToken = rest[1]
			rest = rest[2:]
		case "tls":
			useTLS = true
			rest = rest[1:]
		case "mtls": // TLS that also requires a client certificate the CA signed
			useTLS, useMTLS = true, true
			rest = rest[1:]
		default:
			ts.Fatalf("unknown registry option %q", rest[0])
		}
	}
	fake := srfake.NewRegistry(opts...)
	srv := httptest.NewUnstartedServer(fake.Handler())
	if useTLS {
		pki, err := makeTestPKI()
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(name+"-ca.pem"), pki.caPEM, 0o644))
		srv.TLS = pki.server
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pki.caPEM)
		cfg.TLS = &tls.Config{RootCAs: pool}
		props += "schema.registry.ssl.truststore.type=PEM\nschema.registry.ssl.truststore.location=" + name + "-ca.pem\n"
		if useMTLS {
			srv.TLS = srv.TLS.Clone()
			srv.TLS.ClientAuth, srv.TLS.ClientCAs = tls.RequireAndVerifyClientCert, pool
			// The test PKI's certificate serves for client auth too.
			ts.Check(os.WriteFile(ts.MkAbs(name+"-client.pem"), append(append([]byte(nil), pki.certPEM...), pki.keyPEM...), 0o600))
			cert, err := tls.X509KeyPair(pki.certPEM, pki.keyPEM)
			ts.Check(err)
			cfg.TLS.Certificates = []tls.Certificate{cert}
			props += "schema.registry.ssl.keystore.type=PEM\nschema.registry.ssl.keystore.location=" + name + "-client.pem\n"
		}
		srv.StartTLS()
	} else {
		srv.Start()
	}
	ts.Defer(srv.Close)
	cfg.URLs = []string{srv.URL}
	ts.Check(os.WriteFile(ts.MkAbs(name+".properties"), []byte("schema.registry.url="+srv.URL+"\n"+props), 0o600))
	ts.Setenv(strings.ToUpper(name)+"_URL", srv.URL)
	ts.Value(registriesKey{}).(map[string]*scriptRegistry)[name] = &scriptRegistry{fake: fake, cfg: cfg}
}

const scriptAvroSchema = `{"type":"record","name":"Rec","fields":[
 {"name":"n","type":"long"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}]}`

func cmdAvro(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: avro REGISTRY TOPIC N")
	}
	r := ts.Value(registriesKey{}).(map[string]*scriptRegistry)[args[0]]
	if r == nil {
		ts.Fatalf("no registry %q", args[0])
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	id, _, err := r.fake.RegisterSchema(args[1]+"-value", sr.Schema{Type: sr.TypeAvro, Schema: scriptAvroSchema})
	ts.Check(err)
	reg, err := schema.Open(r.cfg)
	ts.Check(err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = scriptRecord(args[1], i)
		enc, err := reg.Encode(ctx, schema.Ref{ID: id}, []byte(fmt.Sprintf(`{"n":%d,"amount":"%d.50"}`, i, i)))
		ts.Check(err)
		recs[i].Value = enc.Bytes
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(scriptCluster(ts).ListenAddrs()...))
	ts.Check(err)
	defer cl.Close()
	ts.Check(cl.ProduceSync(ctx, recs...).FirstErr())
}

// A script saved with a UTF-8 byte order mark (Windows editors) is KafkaQL
// all the same.
func TestScriptWithByteOrderMark(t *testing.T) {
	if got := scriptText([]byte("\uFEFFSHOW TOPICS;")); got != "SHOW TOPICS;" {
		t.Fatalf("scriptText kept the BOM: %q", got)
	}
}
