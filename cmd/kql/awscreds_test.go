package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shared config and credentials files as the AWS SDKs (and so
// aws-msk-iam-auth) read them: comments, [profile default], continuation
// lines, and the profiles whose credentials come from elsewhere even when
// they also hold keys.
func TestAWSSharedFileFormat(t *testing.T) {
	dir := t.TempDir()
	creds := writeTestFile(t, filepath.Join(dir, "credentials"), `[commented] ; a comment after the header
aws_access_key_id = AKIDCOMMENTED # the key of the commented profile
aws_secret_access_key = se#cr;et	; a # or ; inside the value is the value's

[process]
aws_access_key_id = AKIDSTALE
aws_secret_access_key = stale
credential_process = /usr/local/bin/get-creds --profile process

[continued]
aws_access_key_id = AKIDCONTINUED
aws_secret_access_key = s
note = a value
    that goes on
`)
	conf := writeTestFile(t, filepath.Join(dir, "config"), `[profile default]
aws_access_key_id = AKIDPROFILEDEFAULT
aws_secret_access_key = s
[profile role]
aws_access_key_id = AKIDNOTTHEROLE
aws_secret_access_key = s
role_arn = arn:aws:iam::123456789012:role/kafka
source_profile = continued
`)
	env := func(k string) string {
		return map[string]string{"AWS_SHARED_CREDENTIALS_FILE": creds, "AWS_CONFIG_FILE": conf}[k]
	}
	for _, c := range []struct{ profile, key, secret string }{
		{"commented", "AKIDCOMMENTED", "se#cr;et"},
		{"default", "AKIDPROFILEDEFAULT", "s"}, // [profile default] in the config file
		{"continued", "AKIDCONTINUED", "s"},
	} {
		got, err := awsCredentialChain(env, c.profile)
		if err != nil {
			t.Errorf("profile %s: %v", c.profile, err)
			continue
		}
		if got.AccessKey != c.key || got.SecretKey != c.secret {
			t.Errorf("profile %s: got key %q secret %q, want %q %q", c.profile, got.AccessKey, got.SecretKey, c.key, c.secret)
		}
	}
	for profile, want := range map[string]string{
		"process": "uses credential_process, which kql does not follow",
		"role":    "uses role_arn, which kql does not follow",
	} {
		got, err := awsCredentialChain(env, profile)
		if err == nil {
			t.Errorf("profile %s: the SDKs take its credentials from elsewhere; kql used its static key %s", profile, got.AccessKey)
		} else if !strings.Contains(err.Error(), want) {
			t.Errorf("profile %s: want %q, got %v", profile, want, err)
		}
	}
}

// Temporary credentials that a tool rewrites in the credentials file while
// kql runs: the next authentication signs with the new ones.
func TestMSKIAMReadsTheCredentialsAgainAtEachLogin(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials")
	env := func(k string) string { return map[string]string{"AWS_SHARED_CREDENTIALS_FILE": creds, "HOME": dir}[k] }
	writeTestFile(t, creds, "[default]\naws_access_key_id = ASIAFIRST\naws_secret_access_key = s1\naws_session_token = t1\n")
	m := &mskSettings{}
	if err := m.resolve(env); err != nil {
		t.Fatal(err)
	}
	mech := m.mechanism()
	keyOf := func() string {
		t.Helper()
		_, payload, err := mech.Authenticate(context.Background(), "b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098")
		if err != nil {
			t.Fatal(err)
		}
		var f map[string]string
		if err := json.Unmarshal(payload, &f); err != nil {
			t.Fatal(err)
		}
		return strings.Split(f["x-amz-credential"], "/")[0] + " " + f["x-amz-security-token"]
	}
	if got := keyOf(); got != "ASIAFIRST t1" {
		t.Fatalf("first login signed with %q", got)
	}
	writeTestFile(t, creds, "[default]\naws_access_key_id = ASIASECOND\naws_secret_access_key = s2\naws_session_token = t2\n")
	if got := keyOf(); got != "ASIASECOND t2" {
		t.Errorf("after the credentials file was rewritten, the next login signed with %q, want ASIASECOND t2", got)
	}
	if err := os.Remove(creds); err != nil {
		t.Fatal(err)
	}
	if got := keyOf(); got != "ASIAFIRST t1" { // the chain fails now: the credentials kql started with
		t.Errorf("with the credentials file gone, the login signed with %q, want the starting ASIAFIRST t1", got)
	}
}
