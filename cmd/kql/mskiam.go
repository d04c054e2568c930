package main

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/aws"
)

// mskSettings is what an AWS_MSK_IAM client.properties said, as
// aws-msk-iam-auth documents it:
//
//	security.protocol=SASL_SSL
//	sasl.mechanism=AWS_MSK_IAM
//	sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required awsProfileName="prod";
//	sasl.client.callback.handler.class=software.amazon.msk.auth.iam.IAMClientCallbackHandler
type mskSettings struct {
	profile string   // awsProfileName=; "" follows the default chain
	creds   awsCreds // filled by resolve
	getenv  func(string) string
}

func mskProps(get func(string) (string, bool), bad func(key, format string, a ...any) error) (*mskSettings, error) {
	m := &mskSettings{}
	if v, ok := get("sasl.client.callback.handler.class"); ok && v != "software.amazon.msk.auth.iam.IAMClientCallbackHandler" {
		return nil, bad("sasl.client.callback.handler.class", "%q does not go with sasl.mechanism=AWS_MSK_IAM (want software.amazon.msk.auth.iam.IAMClientCallbackHandler)", v)
	}
	jv, ok := get("sasl.jaas.config")
	if !ok {
		return nil, bad("sasl.mechanism", `AWS_MSK_IAM needs sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required;`)
	}
	j, err := parseJAAS(jv)
	if err != nil {
		return nil, bad("sasl.jaas.config", "%v", err)
	}
	if j.module != "IAMLoginModule" {
		return nil, bad("sasl.jaas.config", "%s does not go with sasl.mechanism=AWS_MSK_IAM (want software.amazon.msk.auth.iam.IAMLoginModule)", j.module)
	}
	for k := range j.options {
		switch k {
		case "awsProfileName", "awsDebugCreds":
		case "awsRoleArn", "awsRoleSessionName", "awsStsRegion", "awsRoleExternalId", "awsRoleAccessKeyId", "awsRoleSecretAccessKey":
			return nil, bad("sasl.jaas.config", "%s: kql does not assume IAM roles; run it with the role's credentials in $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY and $AWS_SESSION_TOKEN (aws sts assume-role, or aws configure export-credentials)", k)
		}
	}
	m.profile = j.options["awsProfileName"]
	return m, nil
}

func (m *mskSettings) resolve(getenv func(string) string) error {
	c, err := awsCredentialChain(getenv, m.profile)
	if err != nil {
		return err
	}
	m.creds, m.getenv = *c, getenv
	return nil
}

// mechanism signs each authentication (every new connection, and each
// re-authentication the brokers ask for) with the chain read again: a
// session longer than temporary credentials picks up the ones a tool
// (aws sso, saml2aws, aws-vault) wrote into the files since, as the AWS
// SDKs' providers do. When the chain cannot be read now, the credentials
// kql started with are used, and a refusal names them.
func (m *mskSettings) mechanism() sasl.Mechanism {
	return aws.ManagedStreamingIAM(func(context.Context) (aws.Auth, error) {
		c := m.creds
		if m.getenv != nil {
			if fresh, err := awsCredentialChain(m.getenv, m.profile); err == nil {
				c = *fresh
			}
		}
		return aws.Auth{AccessKey: c.AccessKey, SecretKey: c.SecretKey, SessionToken: c.SessionToken}, nil
	})
}

func (m *mskSettings) desc() string {
	tok := ""
	if m.creds.SessionToken != "" {
		tok = " with a session token"
	}
	return fmt.Sprintf("as access key %s%s (AWS_MSK_IAM, credentials from %s)", m.creds.AccessKey, tok, m.creds.Source)
}
