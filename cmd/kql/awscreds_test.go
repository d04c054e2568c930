package main

import (
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
