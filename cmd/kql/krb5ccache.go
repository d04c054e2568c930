package main

import (
	"bufio"
	"os"
	"os/user"
	"strconv"
	"strings"
)

// krb5DefaultCCache is default_ccache_name from krb5.conf's [libdefaults]
// ("" when it is not set), with MIT's %{uid}, %{euid}, %{username} and
// %{TEMP} expanded. MIT's tools use it when $KRB5CCNAME is unset; RHEL and
// Fedora set it to a KEYRING or KCM cache, where kinit then writes.
func krb5DefaultCCache(path string, getenv func(string) string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			section = strings.TrimSpace(strings.Trim(line, "[]"))
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section != "libdefaults" || strings.TrimSpace(k) != "default_ccache_name" {
			continue
		}
		return expandKrb5Tokens(strings.TrimSpace(v), getenv)
	}
	return ""
}

func expandKrb5Tokens(v string, getenv func(string) string) string {
	uid := strconv.Itoa(os.Getuid())
	name := uid
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	temp := getenv("TMPDIR")
	if temp == "" {
		temp = "/tmp"
	}
	return strings.NewReplacer("%{uid}", uid, "%{euid}", strconv.Itoa(os.Geteuid()),
		"%{username}", name, "%{TEMP}", temp).Replace(v)
}
