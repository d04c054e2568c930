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
	var sections []iniSection
	for _, f := range []struct {
		path    string
		section string
	}{{credFile, profile}, {confFile, configSection(profile)}} {
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
		for _, s := range secs {
			if s.name == f.section {
				sections = append(sections, s)
			}
		}
	}
	if len(sections) == 0 {
		where := "neither $AWS_ACCESS_KEY_ID nor"
		if explicit {
			where = "not"
		}
		return nil, fmt.Errorf("AWS credentials: %s a profile %q in %s or %s: set $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY, or write the profile (aws configure --profile %s)",
			where, profile, orNone(credFile), orNone(confFile), profile)
	}
	c := &awsCreds{}
	// The credentials file wins over the config file, key by key.
	for i := len(sections) - 1; i >= 0; i-- {
		s := sections[i]
		for k, v := range s.keys {
			switch k {
			case "aws_access_key_id":
				c.AccessKey, c.Source = v, fmt.Sprintf("profile %s in %s:%d", profile, s.file, s.line)
			case "aws_secret_access_key":
				c.SecretKey = v
			case "aws_session_token":
				c.SessionToken = v
			}
		}
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		for _, s := range sections {
			for _, k := range []string{"role_arn", "credential_process", "sso_session", "sso_start_url", "web_identity_token_file", "credential_source"} {
				if _, ok := s.keys[k]; ok {
					return nil, fmt.Errorf("AWS credentials: profile %s in %s:%d uses %s, which kql does not follow (it reads static keys only): export keys for it, e.g. eval \"$(aws configure export-credentials --profile %s --format env)\", and run kql with them",
						profile, s.file, s.line, k, profile)
				}
			}
		}
		s := sections[0]
		return nil, fmt.Errorf("AWS credentials: profile %s in %s:%d has no aws_access_key_id and aws_secret_access_key", profile, s.file, s.line)
	}
	return c, nil
}

func configSection(profile string) string {
	if profile == "default" {
		return "default"
	}
	return "profile " + profile
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

// readINI reads an AWS shared config or credentials file: [section] lines,
// key = value lines, # and ; comments; indented lines under a key with an
// empty value (nested settings such as s3 =) are skipped. A section that
// appears twice is merged, later keys winning, as the SDKs do.
func readINI(path string) ([]iniSection, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []iniSection
	idx := map[string]int{}
	cur := -1
	nested := false
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
			nested = false
			if i, ok := idx[name]; ok {
				cur = i
				continue
			}
			idx[name] = len(out)
			cur = len(out)
			out = append(out, iniSection{name: name, file: path, line: n, keys: map[string]string{}})
			continue
		}
		if nested && (raw[0] == ' ' || raw[0] == '\t') {
			continue
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
		nested = v == ""
		out[cur].keys[k] = v
	}
	return out, sc.Err()
}
