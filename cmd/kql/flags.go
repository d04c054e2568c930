package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
)

// options is the parsed command line.
type options struct {
	bootstrap     string
	bootstrapSet  bool
	playground    bool
	format        string
	check         bool
	commandConfig string
	// cluster is the profile to connect with (-c, else $KQL_CLUSTER);
	// clusterSource says which, for messages.
	cluster       string
	clusterSource string
	readOnly      bool
	// playgroundStatic: the playground's data stays as seeded (no traffic).
	playgroundStatic bool

	tls                   bool
	tlsCA, tlsCert        string
	tlsKey                string
	tlsServerName         string
	tlsInsecureSkipVerify bool

	saslMechanism string
	saslUser      string

	schemaRegistry     []string // URLs, checked and without user info after parseFlags
	schemaRegistryUser string
	schemaRegistryCA   string

	protoPaths     []string // --proto-path, repeatable
	descriptorSets []string // --proto-descriptor-set, repeatable

	timeout     time.Duration
	clientID    string
	clientIDSet bool
	keepGoing   bool
	color       string
	noHistory   bool
	histFile    string
	quiet       bool
	trace       bool
	version     bool
	help        bool

	scripts []scriptArg // -e and -f in the order given
}

// scriptArg is one -e statement text or one -f file, kept in command-line
// order so that `-e A -f x.kql -e B` runs A, then x.kql, then B.
type scriptArg struct {
	inline bool   // -e
	text   string // -e: the statements; -f: the path ("-" is stdin)
}

// scriptFlag is a pflag.Value appending to the shared ordered list.
type scriptFlag struct {
	list   *[]scriptArg
	inline bool
}

func (f scriptFlag) String() string { return "" }
func (f scriptFlag) Type() string {
	if f.inline {
		return "STMT"
	}
	return "FILE"
}
func (f scriptFlag) Set(v string) error {
	if !f.inline && v == "" {
		return errors.New("empty file name (use - for stdin)")
	}
	*f.list = append(*f.list, scriptArg{inline: f.inline, text: v})
	return nil
}

// urlListFlag collects URLs from a repeatable flag that also takes a
// comma-separated list. It does not check them: pflag would quote a bad
// value in its error, and a URL may hold a password; parseFlags checks them.
type urlListFlag struct{ list *[]string }

func (f urlListFlag) String() string { return "" }
func (f urlListFlag) Type() string   { return "URL" }
func (f urlListFlag) Set(v string) error {
	n := 0
	for _, u := range strings.Split(v, ",") {
		if u = strings.TrimSpace(u); u != "" {
			*f.list = append(*f.list, u)
			n++
		}
	}
	if n == 0 {
		return errors.New("empty URL list (want http://host:port[,http://host:port...])")
	}
	return nil
}

// choiceFlag is a string flag limited to a few values, so that a wrong value
// is rejected by the parser with the flag's name in the message.
type choiceFlag struct {
	v       *string
	choices []string
}

func (f choiceFlag) String() string { return *f.v }
func (f choiceFlag) Type() string   { return "string" }
func (f choiceFlag) Set(v string) error {
	for _, c := range f.choices {
		if strings.EqualFold(v, c) {
			*f.v = c
			return nil
		}
	}
	return fmt.Errorf("must be one of %s", strings.Join(f.choices, ", "))
}

func newFlagSet(o *options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("kql", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard) // errors are printed by Main, once, in our words
	fs.StringVarP(&o.bootstrap, "bootstrap", "b", "", "Kafka brokers to start from, `HOST:PORT,...` (default $KQL_BOOTSTRAP, else localhost:9092)")
	fs.BoolVar(&o.playground, "playground", false, "start an embedded 3-broker cluster with demo data and use it")
	fs.BoolVar(&o.playgroundStatic, "playground-static", false, "with --playground: no live traffic, the demo data stays as seeded (default $KQL_PLAYGROUND_STATIC)")
	fs.VarP(scriptFlag{&o.scripts, true}, "execute", "e", "run these statements and exit (repeatable)")
	fs.VarP(scriptFlag{&o.scripts, false}, "file", "f", "run the statements in FILE and exit; - is stdin (repeatable)")
	o.format = "table"
	fs.Var(choiceFlag{&o.format, formatNames}, "format", "output `FORMAT`: "+strings.Join(formatNames, ", ")+" (default table)")
	fs.BoolVar(&o.check, "check", false, "parse the statements only: report syntax errors, connect to nothing")
	fs.StringVarP(&o.cluster, "cluster", "c", "", "connect with the cluster profile `NAME`: $XDG_CONFIG_HOME/kql/clusters/NAME.properties (default $KQL_CLUSTER)")
	fs.BoolVar(&o.readOnly, "read-only", false, "refuse every statement that writes or changes the cluster, before anything is sent")
	fs.StringVar(&o.commandConfig, "command-config", "", "read Kafka client properties from `FILE` (bootstrap.servers, security.protocol, sasl.*, ssl.*)")
	fs.BoolVar(&o.tls, "tls", false, "connect with TLS")
	fs.StringVar(&o.tlsCA, "tls-ca", "", "trust the CA certificates in PEM `FILE` (implies --tls)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "client certificate, PEM `FILE` (implies --tls; needs --tls-key)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "client private key, PEM `FILE` (implies --tls; needs --tls-cert)")
	fs.StringVar(&o.tlsServerName, "tls-server-name", "", "expect `NAME` in broker certificates (implies --tls)")
	fs.BoolVar(&o.tlsInsecureSkipVerify, "tls-insecure-skip-verify", false, "do not verify broker certificates (implies --tls; unsafe)")
	fs.StringVar(&o.saslMechanism, "sasl-mechanism", "", "SASL `MECHANISM`: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&o.saslUser, "sasl-user", "", "SASL `USER`; the password comes from $KQL_SASL_PASSWORD or a prompt")
	fs.Var(urlListFlag{&o.schemaRegistry}, "schema-registry", "decode (and encode) keys and values through the schema registry at `URL` (repeatable, or URL,URL,...)")
	fs.StringVar(&o.schemaRegistryUser, "schema-registry-user", "", "schema registry basic-auth `USER`; the password comes from $KQL_SCHEMA_REGISTRY_PASSWORD or a prompt")
	fs.StringVar(&o.schemaRegistryCA, "schema-registry-ca", "", "trust the CA certificates in PEM `FILE` for an https schema registry")
	fs.StringArrayVar(&o.protoPaths, "proto-path", nil, "decode and encode Protobuf with the .proto files under `DIR`, imports resolved as protoc -I (repeatable; no registry needed)")
	fs.StringArrayVar(&o.descriptorSets, "proto-descriptor-set", nil, "decode and encode Protobuf with the messages of `FILE`, a FileDescriptorSet (protoc --descriptor_set_out; repeatable)")
	fs.DurationVar(&o.timeout, "timeout", 0, "cancel a statement that runs longer than `DURATION` (e.g. 30s; default 0: no limit)")
	fs.StringVar(&o.clientID, "client-id", "kql", "client id `NAME` the brokers see (default kql)")
	fs.BoolVar(&o.keepGoing, "keep-going", false, "in scripts, run the remaining statements after one fails")
	o.color = "auto"
	fs.Var(choiceFlag{&o.color, []string{"auto", "always", "never"}}, "color", "use colour `WHEN`: auto, always or never (default auto; NO_COLOR is honoured)")
	fs.BoolVar(&o.noHistory, "no-history", false, "do not read or write the REPL history file")
	fs.StringVar(&o.histFile, "history-file", "", "keep the REPL history in `FILE` (default $XDG_STATE_HOME/kql/history or ~/.kql_history)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no banner and no notices")
	fs.BoolVar(&o.trace, "trace", false, "print every request each statement sends on stderr, as \\trace on does (for scripts and CI)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.BoolVarP(&o.help, "help", "h", false, "print this help and exit")
	return fs
}

// usageError is a mistake on the command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// playgroundStaticEnv turns the playground's live traffic off, as
// --playground-static does (tests set it so the data they read stays still).
const playgroundStaticEnv = "KQL_PLAYGROUND_STATIC"

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// parseFlags parses args and checks the combinations pflag cannot.
func parseFlags(args []string, getenv func(string) string) (*options, *pflag.FlagSet, error) {
	o := &options{}
	fs := newFlagSet(o)
	if err := fs.Parse(args); err != nil {
		return nil, fs, &usageError{flagError(err)}
	}
	if o.help || o.version {
		return o, fs, nil
	}
	if fs.NArg() > 0 {
		return nil, fs, usagef("unexpected argument %q: give statements with -e 'STMT;' or a file with -f FILE", fs.Arg(0))
	}
	o.bootstrapSet = fs.Changed("bootstrap")
	o.clientIDSet = fs.Changed("client-id")
	if o.bootstrapSet && strings.TrimSpace(o.bootstrap) == "" {
		return nil, fs, usagef("--bootstrap: empty address list (want host:port[,host:port...])")
	}
	if fs.Changed("playground-static") && !o.playground {
		return nil, fs, usagef("--playground-static only applies to --playground")
	}
	if !fs.Changed("playground-static") {
		switch strings.ToLower(strings.TrimSpace(getenv(playgroundStaticEnv))) {
		case "", "0", "false", "no", "off":
		default:
			o.playgroundStatic = true
		}
	}
	if o.playground {
		for _, name := range []string{"bootstrap", "cluster", "command-config", "tls", "tls-ca", "tls-cert", "tls-key", "tls-server-name", "tls-insecure-skip-verify", "sasl-mechanism", "sasl-user",
			"schema-registry", "schema-registry-user", "schema-registry-ca"} {
			if fs.Changed(name) {
				return nil, fs, usagef("--playground starts its own cluster and schema registry: it cannot be combined with --%s", name)
			}
		}
	}
	if fs.Changed("cluster") {
		if strings.TrimSpace(o.cluster) == "" {
			return nil, fs, usagef("--cluster: empty profile name (want kql -c NAME for $XDG_CONFIG_HOME/kql/clusters/NAME.properties)")
		}
		if fs.Changed("command-config") {
			return nil, fs, usagef("--cluster %s and --command-config %s both name a properties file: give one of them (flags such as --bootstrap override the profile)", o.cluster, o.commandConfig)
		}
		o.clusterSource = "--cluster"
	} else if env := strings.TrimSpace(getenv("KQL_CLUSTER")); env != "" && !o.playground && !fs.Changed("command-config") {
		// A flag naming the connection another way beats the variable.
		o.cluster, o.clusterSource = env, "$KQL_CLUSTER"
	}
	for i, raw := range o.schemaRegistry {
		u, user, err := registryURL(raw)
		if err != nil {
			return nil, fs, usagef("--schema-registry: %v", err)
		}
		if user != nil {
			return nil, fs, usagef("--schema-registry %s: the URL holds a user name or password: give the user with --schema-registry-user and the password in $%s (a password on the command line shows in ps and in the shell's history)",
				redactURL(raw), registryPasswordEnv)
		}
		o.schemaRegistry[i] = u
	}
	if fs.Changed("schema-registry-user") && strings.TrimSpace(o.schemaRegistryUser) == "" {
		return nil, fs, usagef("--schema-registry-user: must not be empty")
	}
	if fs.Changed("schema-registry-ca") && o.schemaRegistryCA == "" {
		return nil, fs, usagef("--schema-registry-ca: empty path")
	}
	if o.timeout < 0 {
		return nil, fs, usagef("--timeout: must not be negative, got %s", o.timeout)
	}
	if fs.Changed("client-id") && strings.TrimSpace(o.clientID) == "" {
		return nil, fs, usagef("--client-id: must not be empty")
	}
	if fs.Changed("history-file") && o.histFile == "" {
		return nil, fs, usagef("--history-file: empty path (use --no-history to turn history off)")
	}
	if o.saslMechanism != "" {
		m := strings.ToUpper(o.saslMechanism)
		switch m {
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
			o.saslMechanism = m
		case "OAUTHBEARER":
			return nil, fs, usagef("--sasl-mechanism OAUTHBEARER: OAUTHBEARER is set in --command-config (sasl.mechanism=OAUTHBEARER, sasl.oauthbearer.token.endpoint.url and the client credentials; see README, OAUTHBEARER)")
		case "GSSAPI", "AWS_MSK_IAM":
			return nil, fs, usagef("--sasl-mechanism %s: its credentials are not a user and password: set sasl.mechanism=%s and sasl.jaas.config in a --command-config file (see Connecting in the README)", m, m)
		default:
			return nil, fs, usagef("--sasl-mechanism: unknown mechanism %q (want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", o.saslMechanism)
		}
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		if o.tlsCert == "" {
			return nil, fs, usagef("--tls-key needs --tls-cert (the client certificate for that key)")
		}
		return nil, fs, usagef("--tls-cert needs --tls-key (the private key of that certificate)")
	}
	if o.tlsCA != "" && o.tlsInsecureSkipVerify {
		return nil, fs, usagef("--tls-insecure-skip-verify would ignore --tls-ca %s (nothing is verified with it): give one of them", o.tlsCA)
	}
	if o.tlsCA != "" || o.tlsCert != "" || o.tlsServerName != "" || o.tlsInsecureSkipVerify {
		o.tls = true
	}
	stdinScripts := 0
	for _, s := range o.scripts {
		if !s.inline && s.text == "-" {
			stdinScripts++
		}
	}
	if stdinScripts > 1 {
		return nil, fs, usagef("-f -: stdin can be read only once")
	}
	return o, fs, nil
}

// flagError rewrites pflag's messages so that each names the flag and says
// what to do.
func flagError(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "unknown flag") || strings.HasPrefix(msg, "unknown shorthand flag") {
		return msg + " (see kql --help)"
	}
	return msg
}

func printUsage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprint(w, `kql: an interactive KafkaQL shell for Apache Kafka

Usage:
  kql [flags]                       REPL when stdin and stdout are terminals, else run stdin as a script
  kql -e 'STMT; STMT' [-e ...]      run statements and exit
  kql -f FILE [-f ...]              run files and exit (- is stdin)
  kql --playground                  try it on an embedded cluster with demo data

Flags:
`)
	writeFlagUsages(w, fs)
	fmt.Fprint(w, `
Environment:
  KQL_BOOTSTRAP       default for --bootstrap
  KQL_CLUSTER         default for --cluster (the profile to connect with)
  XDG_CONFIG_HOME     profiles are $XDG_CONFIG_HOME/kql/clusters/NAME.properties (default ~/.config)
  KQL_PLAYGROUND_STATIC
                      set (not 0, false, no, off): --playground without live traffic, as --playground-static
  KQL_SASL_PASSWORD   the SASL password (there is no flag for it)
  KQL_SCHEMA_REGISTRY_PASSWORD
                      the schema registry password of --schema-registry-user (no flag either)
  NO_COLOR            turns colour off, as --color never

Exit codes: 0 every statement succeeded; 1 a statement failed or a result was partial;
2 usage or syntax error; 3 the cluster could not be reached.
`)
}

// writeFlagUsages lists the flags in declaration order, one per line, without
// pflag's "[=true|false]" noise on boolean flags.
func writeFlagUsages(w io.Writer, fs *pflag.FlagSet) {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name, usage := pflag.UnquoteUsage(f)
		short := "    "
		if f.Shorthand != "" {
			short = "-" + f.Shorthand + ", "
		}
		arg := ""
		if f.Value.Type() != "bool" {
			if name == "" || name == "string" {
				name = strings.ToUpper(f.Value.Type())
			}
			arg = " " + name
		}
		fmt.Fprintf(tw, "  %s--%s%s\t%s\n", short, f.Name, arg, usage)
	})
	tw.Flush()
}
