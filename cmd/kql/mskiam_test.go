package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// AWS MSK IAM cannot be tested against MSK here. These tests cover what
// can be: the properties, the credential chain, and the signed payload
// franz-go builds, whose SigV4 signature is checked by a signer of the
// test's own that reproduces AWS's published example first.

func writeTestFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const mskBase = `bootstrap.servers=b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098
security.protocol=SASL_SSL
sasl.mechanism=AWS_MSK_IAM
sasl.client.callback.handler.class=software.amazon.msk.auth.iam.IAMClientCallbackHandler
`

func TestMSKIAMProperties(t *testing.T) {
	dir := t.TempDir()
	load := func(jaas string) (*commandConfig, error) {
		return loadCommandConfig(writeTestFile(t, filepath.Join(dir, "c.properties"), mskBase+"sasl.jaas.config="+jaas+"\n"))
	}
	cc, err := load(`software.amazon.msk.auth.iam.IAMLoginModule required awsProfileName="prod";`)
	if err != nil {
		t.Fatal(err)
	}
	if cc.settings.msk == nil || cc.settings.msk.profile != "prod" || cc.settings.saslMechanism != "AWS_MSK_IAM" {
		t.Fatalf("want AWS_MSK_IAM with profile prod, got %+v", cc.settings)
	}
	for _, w := range cc.warnings {
		if strings.Contains(w, "ignoring") {
			t.Errorf("a documented key is ignored: %s", w)
		}
	}
	if cc, err = load(`software.amazon.msk.auth.iam.IAMLoginModule required;`); err != nil || cc.settings.msk.profile != "" {
		t.Fatalf("no awsProfileName: %v %+v", err, cc)
	}
	for jaas, want := range map[string]string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";`:             "PlainLoginModule does not go with sasl.mechanism=AWS_MSK_IAM",
		`software.amazon.msk.auth.iam.IAMLoginModule required awsRoleArn="arn:aws:iam::123456789012:role/kafka";`: "kql does not assume IAM roles",
	} {
		if _, err := load(jaas); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want an error saying %q, got %v", jaas, want, err)
		}
	}
	p := writeTestFile(t, filepath.Join(dir, "h.properties"), strings.Replace(mskBase, "IAMClientCallbackHandler", "OtherHandler", 1)+
		"sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required;\n")
	if _, err := loadCommandConfig(p); err == nil || !strings.Contains(err.Error(), "sasl.client.callback.handler.class") {
		t.Errorf("a foreign callback handler: want an error naming the key, got %v", err)
	}
}

func TestAWSCredentialChain(t *testing.T) {
	home := t.TempDir()
	writeTestFile(t, filepath.Join(home, ".aws", "credentials"), `# comment
[default]
aws_access_key_id = AKIDDEFAULT
aws_secret_access_key = secret-default

[prod]
aws_access_key_id=AKIDPROD
aws_secret_access_key=secret-prod
aws_session_token = token-prod
`)
	writeTestFile(t, filepath.Join(home, ".aws", "config"), `[default]
region = eu-west-1
[profile staging]
aws_access_key_id = AKIDSTAGING
aws_secret_access_key = secret-staging
s3 =
    max_concurrent_requests = 10
[profile prod]
aws_access_key_id = AKIDPROD-CONFIG
region = us-east-1
[profile assumed]
role_arn = arn:aws:iam::123456789012:role/kafka
source_profile = default
`)
	env := func(kv ...string) func(string) string {
		m := map[string]string{"HOME": home}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		name, profile   string
		env             func(string) string
		key, token, src string
	}{
		{"environment first", "", env("AWS_ACCESS_KEY_ID", "AKIDENV", "AWS_SECRET_ACCESS_KEY", "s", "AWS_SESSION_TOKEN", "t", "AWS_PROFILE", "prod"), "AKIDENV", "t", "$AWS_ACCESS_KEY_ID"},
		{"default profile", "", env(), "AKIDDEFAULT", "", "profile default in " + filepath.Join(home, ".aws", "credentials")},
		{"AWS_PROFILE, credentials file over config file", "", env("AWS_PROFILE", "prod"), "AKIDPROD", "token-prod", "profile prod"},
		{"[profile x] in config", "", env("AWS_PROFILE", "staging"), "AKIDSTAGING", "", "profile staging in " + filepath.Join(home, ".aws", "config")},
		{"awsProfileName not in the files: the default chain, as aws-msk-iam-auth", "nope", env(), "AKIDDEFAULT", "", `profile default in ` + filepath.Join(home, ".aws", "credentials") + `:2 (no profile "nope"`},
		{"awsProfileName beats the environment", "staging", env("AWS_ACCESS_KEY_ID", "AKIDENV", "AWS_SECRET_ACCESS_KEY", "s"), "AKIDSTAGING", "", "profile staging"},
		{"AWS_SHARED_CREDENTIALS_FILE", "other", env("AWS_SHARED_CREDENTIALS_FILE", writeTestFile(t, filepath.Join(t.TempDir(), "creds"), "[other]\naws_access_key_id=AKIDOTHER\naws_secret_access_key=x\n")), "AKIDOTHER", "", "profile other"},
	} {
		got, err := awsCredentialChain(c.env, c.profile)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.AccessKey != c.key || got.SessionToken != c.token || !strings.Contains(got.Source, c.src) {
			t.Errorf("%s: got key %s token %q from %q, want %s %q from %q", c.name, got.AccessKey, got.SessionToken, got.Source, c.key, c.token, c.src)
		}
	}
	for _, c := range []struct {
		name, profile string
		env           func(string) string
		want          string
	}{
		{"a role profile", "assumed", env(), "uses role_arn, which kql does not follow"},
		{"no such profile, nor any other", "nope", func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] }, `no profile "nope" (awsProfileName in sasl.jaas.config)`},
		{"half the environment", "", env("AWS_ACCESS_KEY_ID", "AKIDENV"), "go together"},
		{"nothing at all", "", func(string) string { return "" }, "neither $AWS_ACCESS_KEY_ID nor"},
	} {
		_, err := awsCredentialChain(c.env, c.profile)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error saying %q, got %v", c.name, c.want, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret-") {
			t.Errorf("%s: the error shows a secret: %v", c.name, err)
		}
	}
}

// presignV4 is SigV4 query signing (a presigned GET with only the host
// header signed), written from AWS's description to check franz-go's.
func presignV4(secret, date, region, service, host, path, query, payloadHash string) string {
	canon := strings.Join([]string{"GET", path, query, "host:" + host + "\n", "host", payloadHash}, "\n")
	sum := sha256.Sum256([]byte(canon))
	scope := strings.Join([]string{date[:8], region, service, "aws4_request"}, "/")
	sts := strings.Join([]string{"AWS4-HMAC-SHA256", date, scope, hex.EncodeToString(sum[:])}, "\n")
	mac := func(key []byte, s string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(s))
		return h.Sum(nil)
	}
	k := mac(mac(mac(mac([]byte("AWS4"+secret), date[:8]), region), service), "aws4_request")
	return hex.EncodeToString(mac(k, sts))
}

func TestMSKIAMSignedPayload(t *testing.T) {
	// AWS's published example (S3 "Authenticating Requests: Using Query
	// Parameters", GET examplebucket/test.txt): the signer must reproduce it.
	q := url.Values{}
	q.Set("X-Amz-Algorithm", "AWS4-HMAC-SHA256")
	q.Set("X-Amz-Credential", "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request")
	q.Set("X-Amz-Date", "20130524T000000Z")
	q.Set("X-Amz-Expires", "86400")
	q.Set("X-Amz-SignedHeaders", "host")
	if got, want := presignV4("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "20130524T000000Z", "us-east-1", "s3",
		"examplebucket.s3.amazonaws.com", "/test.txt", q.Encode(), "UNSIGNED-PAYLOAD"),
		"aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"; got != want {
		t.Fatalf("the test's SigV4 signer gives %s for AWS's example, want %s", got, want)
	}

	m := &mskSettings{creds: awsCreds{AccessKey: "AKIAIOSFODNN7EXAMPLE", SecretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", SessionToken: "tok en/+="}}
	host := "b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com"
	before := time.Now().UTC()
	_, payload, err := m.mechanism().Authenticate(context.Background(), host+":9098")
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]string
	if err := json.Unmarshal(payload, &f); err != nil {
		t.Fatalf("the payload is not a JSON object of strings: %v\n%s", err, payload)
	}
	date := f["x-amz-date"]
	ts, err := time.Parse("20060102T150405Z", date)
	if err != nil || ts.Before(before.Add(-time.Second)) || ts.After(time.Now().Add(time.Second)) {
		t.Errorf("x-amz-date %q is not now (%v)", date, err)
	}
	// The fields aws-msk-iam-auth sends (version 2020_10_22), keys lower case.
	for k, want := range map[string]string{
		"version":              "2020_10_22",
		"host":                 host,
		"action":               "kafka-cluster:Connect",
		"x-amz-algorithm":      "AWS4-HMAC-SHA256",
		"x-amz-credential":     "AKIAIOSFODNN7EXAMPLE/" + date[:8] + "/eu-west-1/kafka-cluster/aws4_request",
		"x-amz-expires":        "900",
		"x-amz-signedheaders":  "host",
		"x-amz-security-token": "tok en/+=",
	} {
		if f[k] != want {
			t.Errorf("payload %s = %q, want %q", k, f[k], want)
		}
	}
	if f["user-agent"] == "" {
		t.Errorf("payload has no user-agent")
	}
	if strings.Contains(string(payload), m.creds.SecretKey) {
		t.Errorf("the payload carries the secret key")
	}
	q = url.Values{}
	q.Set("Action", f["action"])
	q.Set("X-Amz-Algorithm", f["x-amz-algorithm"])
	q.Set("X-Amz-Credential", f["x-amz-credential"])
	q.Set("X-Amz-Date", date)
	q.Set("X-Amz-Expires", f["x-amz-expires"])
	q.Set("X-Amz-Security-Token", f["x-amz-security-token"])
	q.Set("X-Amz-SignedHeaders", f["x-amz-signedheaders"])
	emptyBody := sha256.Sum256(nil)
	want := presignV4(m.creds.SecretKey, date, "eu-west-1", "kafka-cluster", host, "/",
		strings.ReplaceAll(q.Encode(), "+", "%20"), hex.EncodeToString(emptyBody[:]))
	if f["x-amz-signature"] != want {
		t.Errorf("x-amz-signature = %s, want %s (SigV4 of the payload's own fields)", f["x-amz-signature"], want)
	}
}
