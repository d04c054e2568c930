package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The GSSAPI properties and their environment, without a KDC (the end to
// end test is TestRealKerberos).
func TestKerberosProperties(t *testing.T) {
	dir := t.TempDir()
	base := "bootstrap.servers=localhost:9092\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\n"
	load := func(extra string) (*commandConfig, error) {
		return loadCommandConfig(writeTestFile(t, filepath.Join(dir, "k.properties"), base+extra))
	}
	cc, err := load("sasl.kerberos.service.name=kfk\nsasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"kql.keytab\" principal=\"kql@EXAMPLE.COM\";\n")
	if err != nil {
		t.Fatal(err)
	}
	k := cc.settings.kerberos
	if k == nil || k.service != "kfk" || k.principal != "kql@EXAMPLE.COM" || k.keytab != filepath.Join(dir, "kql.keytab") || k.useCache {
		t.Fatalf("got %+v", k)
	}
	if len(cc.warnings) != 0 {
		t.Errorf("warnings for documented keys: %q", cc.warnings)
	}
	if cc, err = load("sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true serviceName=\"kafka2\";\n"); err != nil || !cc.settings.kerberos.useCache || cc.settings.kerberos.service != "kafka2" {
		t.Fatalf("ticket cache: %v %+v", err, cc)
	}
	for jaas, want := range map[string]string{
		`com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true principal="a@B";`:       `useKeyTab=true needs keyTab=`,
		`com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="k";`:            `needs principal=`,
		`com.sun.security.auth.module.Krb5LoginModule required;`:                                      "cannot prompt for a Kerberos password",
		`org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="b";`: "ScramLoginModule does not go with sasl.mechanism=GSSAPI",
	} {
		if _, err := load("sasl.jaas.config=" + jaas + "\n"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want an error saying %q, got %v", jaas, want, err)
		}
	}

	// The environment: $KRB5_CONFIG, then /etc/krb5.conf; $KRB5CCNAME.
	conf := writeTestFile(t, filepath.Join(dir, "krb5.conf"), "[libdefaults]\n default_realm = EXAMPLE.COM\n")
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	ks := &kerberosSettings{service: "kafka", useCache: true}
	if err := ks.resolve(env("KRB5_CONFIG", conf+":/etc/krb5.conf", "KRB5CCNAME", "FILE:/tmp/cc")); err != nil || ks.krb.Krb5Conf != conf || ks.krb.CCache != "/tmp/cc" {
		t.Errorf("got %v %+v", err, ks.krb)
	}
	if err := ks.resolve(env("KRB5_CONFIG", conf, "KRB5CCNAME", "KEYRING:persistent:0")); err == nil || !strings.Contains(err.Error(), "FILE caches only") {
		t.Errorf("a KEYRING cache: want it refused, got %v", err)
	}
	if err := ks.resolve(env("KRB5_CONFIG", filepath.Join(dir, "nope.conf"))); err == nil || !strings.Contains(err.Error(), "$KRB5_CONFIG names") {
		t.Errorf("a missing $KRB5_CONFIG file: want it named, got %v", err)
	}
	if err := ks.resolve(env("KRB5_CONFIG", conf)); err != nil || ks.krb.CCache != filepath.Join("/tmp", "krb5cc_"+strconv.Itoa(os.Getuid())) {
		t.Errorf("default cache: %v %q", err, ks.krb.CCache)
	}
}

// Without $KRB5CCNAME, MIT's kinit writes where krb5.conf's
// default_ccache_name says (RHEL and Fedora: a KEYRING or KCM cache), so
// kql must look there too, not say "no ticket cache, run kinit" after the
// user did.
func TestKerberosDefaultCCacheName(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string { return map[string]string{"KRB5_CONFIG": filepath.Join(dir, "krb5.conf")}[k] }
	write := func(ccname string) {
		writeTestFile(t, filepath.Join(dir, "krb5.conf"), "[libdefaults]\n default_realm = EXAMPLE.COM\n default_ccache_name = "+ccname+"\n[realms]\n EXAMPLE.COM = {\n  kdc = kdc.example.com\n }\n")
	}
	ks := &kerberosSettings{service: "kafka", useCache: true}
	write("KCM:")
	if err := ks.resolve(env); err == nil || !strings.Contains(err.Error(), "default_ccache_name in "+filepath.Join(dir, "krb5.conf")+" is KCM:, a KCM cache") {
		t.Errorf("default_ccache_name = KCM: want it named and refused, got %v (cache %q)", err, ks.krb.CCache)
	}
	write("FILE:/var/tmp/cc_%{uid}")
	if err := ks.resolve(env); err != nil || ks.krb.CCache != "/var/tmp/cc_"+strconv.Itoa(os.Getuid()) {
		t.Errorf("default_ccache_name = FILE:/var/tmp/cc_%%{uid}: got %v %q", err, ks.krb.CCache)
	}
	// $KRB5CCNAME still comes first.
	withEnv := func(k string) string {
		if k == "KRB5CCNAME" {
			return "FILE:/tmp/mine"
		}
		return env(k)
	}
	if err := ks.resolve(withEnv); err != nil || ks.krb.CCache != "/tmp/mine" {
		t.Errorf("$KRB5CCNAME over default_ccache_name: got %v %q", err, ks.krb.CCache)
	}
}
