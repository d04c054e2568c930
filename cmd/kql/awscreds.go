package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// awsCreds are static AWS credentials and where they came from.
type awsCreds struct {
	AccessKey, SecretKey, SessionToken string
	Source                             string // for messages: "$AWS_ACCESS_KEY_ID", "profile prod in ~/.aws/credentials"
}

// awsCredentialChain resolves credentials as the AWS SDKs' default chain
// does for static keys: the environment ($AWS_ACCESS_KEY_ID,
// $AWS_SECRET_ACCESS_KEY, $AWS_SESSION_TOKEN), then the profile
// ($AWS_PROFILE, else default) of the shared credentials file
// ($AWS_SHARED_CREDENTIALS_FILE, ~/.aws/credentials) and config file
// ($AWS_CONFIG_FILE, ~/.aws/config, where it is [profile NAME]). A profile
// named in the JAAS entry (awsProfileName) is used alone, as
// aws-msk-iam-auth does. Roles, SSO, credential_process and instance
// metadata are not followed: their profiles are refused with what to do.
func awsCredentialChain(getenv func(string) string, profile string) (*awsCreds, error) {
	explicit := profile != ""
	if !explicit {
		if id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"); id != "" || secret != "" {
			if id == "" || secret == "" {
				return nil, errors.New("AWS credentials: $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY go together; one of them is empty")
			}
			return &awsCreds{AccessKey: id, SecretKey: secret, SessionToken: getenv("AWS_SESSION_TOKEN"), Source: "$AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY"}, nil
		}
		profile = getenv("AWS_PROFILE")
		if profile == "" {
			profile = "default"
		}
	}
	home := getenv("HOME")
	file := func(env, name string) string {
		if v := getenv(env); v != "" {
			return v
		}
		if home == "" {
			return ""
		}
		return filepath.Join(home, ".aws", name)
	}
	credFile, confFile := file("AWS_SHARED_CREDENTIALS_FILE", "credentials"), file("AWS_CONFIG_FILE", "config")
	var sections []iniSection // the credentials file's, then the config file's
	for _, f := range []struct {
		path    string
		section func([]iniSection) (iniSection, bool)
	}{{credFile, func(secs []iniSection) (iniSection, bool) { return findSection(secs, profile) }},
		{confFile, func(secs []iniSection) (iniSection, bool) { return configSection(secs, profile) }}} {
		if f.path == "" {
			continue
		}
		secs, err := readINI(f.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("AWS credentials: %v", err)
		}
		if s, ok := f.section(secs); ok {
			sections = append(sections, s)
		}
	}
	if len(sections) == 0 && explicit {
		// aws-msk-iam-auth puts the awsProfileName profile before the
		// default chain, not instead of it: without that profile the
		// environment and $AWS_PROFILE (or default) still count.
		c, err := awsCredentialChain(getenv, "")
		if err != nil {
			return nil, fmt.Errorf("AWS credentials: no profile %q (awsProfileName in sasl.jaas.config) in %s or %s, and the default chain has none either: %w",
				profile, orNone(credFile), orNone(confFile), err)
		}
		c.Source += fmt.Sprintf(" (no profile %q, awsProfileName, in %s or %s)", profile, orNone(credFile), orNone(confFile))
		return c, nil
	}
	if len(sections) == 0 {
		where := "neither $AWS_ACCESS_KEY_ID nor"
		return nil, fmt.Errorf("AWS credentials: %s a profile %q in %s or %s: set $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY, or write the profile (aws configure --profile %s)",
			where, profile, orNone(credFile), orNone(confFile), profile)
	}
	// The SDKs merge the profile's two sections, the credentials file
	// winning key by key.
	type setting struct {
		value string
		at    iniSection
	}
	merged := map[string]setting{}
	for i := len(sections) - 1; i >= 0; i-- {
		for k, v := range sections[i].keys {
			merged[k] = setting{v, sections[i]}
		}
	}
	// A profile that names a role, SSO or a credential process gets its
	// credentials from there in the SDKs (aws-msk-iam-auth's too) even when
	// it also holds static keys: using those keys instead would connect as
	// another identity, so refuse it.
	refuse := func(k string) error {
		at := merged[k].at
		return fmt.Errorf("AWS credentials: profile %s in %s:%d uses %s, which kql does not follow (it reads static keys only): export keys for it, e.g. eval \"$(aws configure export-credentials --profile %s --format env)\", and run kql with them",
			profile, at.file, at.line, k, profile)
	}
	has := func(k string) bool { _, ok := merged[k]; return ok }
	if has("role_arn") && (has("web_identity_token_file") || has("source_profile") || has("credential_source")) {
		return nil, refuse("role_arn")
	}
	for _, k := range []string{"sso_session", "sso_start_url", "sso_account_id", "sso_role_name", "sso_region", "credential_process"} {
		if has(k) {
			return nil, refuse(k)
		}
	}
	c := &awsCreds{AccessKey: merged["aws_access_key_id"].value, SecretKey: merged["aws_secret_access_key"].value,
		SessionToken: merged["aws_session_token"].value}
	if c.AccessKey == "" || c.SecretKey == "" {
		for _, k := range []string{"role_arn", "web_identity_token_file", "credential_source"} {
			if has(k) {
				return nil, refuse(k)
			}
		}
		s := sections[0]
		return nil, fmt.Errorf("AWS credentials: profile %s in %s:%d has no aws_access_key_id and aws_secret_access_key", profile, s.file, s.line)
	}
	at := merged["aws_access_key_id"].at
	c.Source = fmt.Sprintf("profile %s in %s:%d", profile, at.file, at.line)
	return c, nil
}

func findSection(secs []iniSection, name string) (iniSection, bool) {
	for _, s := range secs {
		if s.name == name {
			return s, true
		}
	}
	return iniSection{}, false
}

// configSection is the profile's section of the config file: [profile
// NAME], and for the default profile [profile default] (which the SDKs
// prefer) or [default].
func configSection(secs []iniSection, profile string) (iniSection, bool) {
	if s, ok := findSection(secs, "profile "+profile); ok || profile != "default" {
		return s, ok
	}
	return findSection(secs, "default")
}

func orNone(p string) string {
	if p == "" {
		return "(no $HOME)"
	}
	return p
}

type iniSection struct {
	name string
	file string
	line int
	keys map[string]string
}

// readINI reads an AWS shared config or credentials file as the SDKs'
// profile file reader does: [section] lines (anything after the closing ]
// is a comment), key = value lines, whose comment starts at a # or ; after
// whitespace (a # or ; inside a value, as in a secret, is part of it),
// whole-line # and ; comments, and indented continuation lines (nested
// settings such as s3 =), which extend the value above them. A section
// that appears twice is merged, later keys winning.
func readINI(path string) ([]iniSection, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []iniSection
	idx := map[string]int{}
	cur := -1
	lastKey := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, fmt.Errorf("%s:%d: a section header without ']'", path, n)
			}
			name := strings.Join(strings.Fields(line[1:end]), " ")
			lastKey = ""
			if i, ok := idx[name]; ok {
				cur = i
				continue
			}
			idx[name] = len(out)
			cur = len(out)
			out = append(out, iniSection{name: name, file: path, line: n, keys: map[string]string{}})
			continue
		}
		if lastKey != "" && (raw[0] == ' ' || raw[0] == '\t') {
			out[cur].keys[lastKey] += "\n" + line
			continue
		}
		if i := inlineComment(line); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			// Not key=value: name the line, never its text (it may be a secret).
			return nil, fmt.Errorf("%s:%d: want key = value", path, n)
		}
		if cur < 0 {
			return nil, fmt.Errorf("%s:%d: a setting before any [section]", path, n)
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		out[cur].keys[k] = v
		lastKey = k
	}
	return out, sc.Err()
}

// inlineComment is where a key = value line's comment starts: the first #
// or ; after a space or tab, or -1.
func inlineComment(line string) int {
	for i := 1; i < len(line); i++ {
		if (line[i] == '#' || line[i] == ';') && (line[i-1] == ' ' || line[i-1] == '\t') {
			return i - 1
		}
	}
	return -1
}
