package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kql-dev/kql/lang"
)

// banner greets the person at the terminal with what they are connected to.
// It asks SHOW CLUSTER, like any other statement, rather than reaching into
// the kafka package; if that fails the banner just names the bootstrap.
func (a *app) banner(ctx context.Context) {
	if a.opts.quiet || !a.ios.ErrTTY {
		return
	}
	where := strings.Join(a.kcfg.Bootstrap, ",")
	info := a.clusterInfo(ctx)
	switch {
	case info["cluster_id"] != "" && info["brokers"] != "":
		fmt.Fprintf(a.stderr, "kql %s: connected to cluster %s (%s %s) at %s\n",
			Version, info["cluster_id"], info["brokers"], plural(atoiOr(info["brokers"], 2), "broker", "brokers"), where)
	default:
		fmt.Fprintf(a.stderr, "kql %s: connected to %s\n", Version, where)
	}
	if a.sett != nil {
		fmt.Fprintf(a.stderr, "connection: %s\n", a.sett.connectedAs())
	}
	if a.regDesc != "" {
		fmt.Fprintf(a.stderr, "schema registry: %s\n", a.regDesc)
	}
	if a.profile != nil {
		fmt.Fprintf(a.stderr, "cluster profile: %s (%s)\n", a.profile.name, a.profile.cc.path)
	}
	if a.guard != nil {
		fmt.Fprintf(a.stderr, "read-only: %s: statements that write are refused\n", a.guard.why)
	}
	fmt.Fprintln(a.stderr, `Type \? for meta-commands, \help for statements, \q to quit.`)
}

// clusterInfo runs SHOW CLUSTER and returns its property/value rows.
func (a *app) clusterInfo(ctx context.Context) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info := map[string]string{}
	res, err := a.conn.exec.Execute(ctx, &lang.ShowCluster{})
	if err != nil {
		return info
	}
	defer res.Close()
	for {
		row, ok := res.Next()
		if !ok {
			break
		}
		if len(row) >= 2 && row[0] != nil && row[1] != nil {
			info[fmt.Sprint(row[0])] = fmt.Sprint(row[1])
		}
	}
	return info
}

func atoiOr(s string, def int) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return def
		}
		n = n*10 + int(c-'0')
	}
	if s == "" {
		return def
	}
	return n
}
