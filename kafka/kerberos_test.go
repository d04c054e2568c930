package kafka

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// A REPL outlives a ticket: when the ticket cache's TGT has expired, the
// user runs kinit, and the next connection must use the new ticket, not
// say "expired" until kql is restarted. Against a real MIT KDC; the GSSAPI
// token is built without a broker (Authenticate only talks to the KDC).
func TestKerberosTicketCacheReadAgainAfterKinit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kdc, err := kafkatest.StartKDC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer kdc.Close()
	dir := t.TempDir()
	if err := kdc.AddPrincipal(ctx, kafkatest.KerberosServicePrincipal, filepath.Join(dir, "kafka.keytab")); err != nil {
		t.Fatal(err)
	}
	user, keytab, cache := "u@"+kafkatest.KerberosRealm, filepath.Join(dir, "u.keytab"), filepath.Join(dir, "ccache")
	if err := kdc.AddPrincipal(ctx, user, keytab); err != nil {
		t.Fatal(err)
	}
	if err := kdc.Kinit(ctx, user, keytab, cache, "-l", "1s"); err != nil {
		t.Fatal(err)
	}
	mech, err := Kerberos{Service: "kafka", CCache: cache, Krb5Conf: kdc.Krb5Conf, Krb5From: "the test's"}.Mechanism()
	if err != nil {
		t.Fatal(err)
	}
	defer mech.(*krbMech).Close()
	end := mech.(*krbMech).tgtEnd
	if end.IsZero() {
		t.Fatal("the ticket cache's TGT end time was not read")
	}
	time.Sleep(time.Until(end) + 200*time.Millisecond) // past its end, whatever the load

	const broker = "localhost:9092"
	var ke *KerberosError
	if _, _, err := mech.Authenticate(ctx, broker); !errors.As(err, &ke) || ke.Kind != KerberosTicketExpired {
		t.Fatalf("an expired ticket cache: want KerberosTicketExpired, got %v", err)
	}
	if err := kdc.Kinit(ctx, user, keytab, cache); err != nil { // the user runs kinit again
		t.Fatal(err)
	}
	_, token, err := mech.Authenticate(ctx, broker)
	if err != nil {
		t.Fatalf("after kinit wrote a new ticket into %s: %v", cache, err)
	}
	if len(token) == 0 {
		t.Fatal("no GSSAPI token after kinit")
	}
}

// A keytab login outlives its tickets: with a TGT lifetime of a few
// seconds, a connection made after it ended still authenticates (gokrb5
// logs in again from the keytab), so a session longer than the realm's
// ticket lifetime keeps connecting.
func TestKerberosKeytabLogsInAgainAfterExpiry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kdc, err := kafkatest.StartKDC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer kdc.Close()
	dir := t.TempDir()
	if err := kdc.AddPrincipal(ctx, kafkatest.KerberosServicePrincipal, filepath.Join(dir, "kafka.keytab")); err != nil {
		t.Fatal(err)
	}
	user, keytab := "u@"+kafkatest.KerberosRealm, filepath.Join(dir, "u.keytab")
	if err := kdc.AddPrincipal(ctx, user, keytab); err != nil {
		t.Fatal(err)
	}
	// The bed's krb5.conf with tickets of 3 seconds.
	conf, err := os.ReadFile(kdc.Krb5Conf)
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "krb5.conf")
	if err := os.WriteFile(short, []byte(strings.Replace(string(conf), "ticket_lifetime = 12h", "ticket_lifetime = 3s", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	mech, err := Kerberos{Service: "kafka", Principal: user, Keytab: keytab, Krb5Conf: short, Krb5From: "the test's"}.Mechanism()
	if err != nil {
		t.Fatal(err)
	}
	defer mech.(*krbMech).Close()
	const broker = "localhost:9092"
	if _, _, err := mech.Authenticate(ctx, broker); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second) // past the first TGT's and service ticket's end
	if _, token, err := mech.Authenticate(ctx, broker); err != nil || len(token) == 0 {
		t.Fatalf("a connection after the keytab's first tickets ended: %v", err)
	}
}
