package schema

import (
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenRejectsBadURLs(t *testing.T) {
	_, err := Open(Config{})
	require.ErrorContains(t, err, "no schema registry URL")
	for _, u := range []string{"localhost:8081", "ftp://h:1", "http://", "", " http://h:1", "h:8081/x", "http://h:99999", "http://h:0", "http://h:port"} {
		_, err := Open(Config{URLs: []string{"http://ok:8081", u}})
		require.Error(t, err, "%q", u)
		require.Contains(t, err.Error(), "schema registry URL", u)
		require.Contains(t, err.Error(), strings.TrimSpace(u), u)
	}
	for _, u := range []string{"http://h:8081", "https://h", "http://h:8081/prefix/", "HTTP://H:1", "http://[::1]:8081"} {
		_, err := Open(Config{URLs: []string{u}})
		require.NoError(t, err, u)
	}
	_, err = Open(Config{URLs: []string{"http://h:1"}, User: "u", Password: "p", BearerToken: "t"})
	require.ErrorContains(t, err, "not both")
}

// authServer answers every request with an empty subject list and records
// the Authorization header and path of each.
func authServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

func TestOpenSendsCredentials(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:s3cret"))
	cases := []struct {
		name string
		cfg  func(url string) Config
		want string
	}{
		{"basic", func(u string) Config { return Config{URLs: []string{u}, User: "bob", Password: "s3cret"} }, "/subjects " + basic},
		{"bearer", func(u string) Config { return Config{URLs: []string{u}, BearerToken: "tok"} }, "/subjects Bearer tok"},
		{"none", func(u string) Config { return Config{URLs: []string{u}} }, "/subjects "},
		{"user and password in the URL", func(u string) Config {
			return Config{URLs: []string{strings.Replace(u, "http://", "http://bob:s3cret@", 1)}}
		}, "/subjects " + basic},
		{"path prefix with a trailing slash", func(u string) Config { return Config{URLs: []string{u + "/sr/"}, BearerToken: "tok"} }, "/sr/subjects Bearer tok"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := authServer(t)
			reg, err := Open(tc.cfg(srv.URL))
			require.NoError(t, err)
			subjects, errs, _, err := reg.Subjects(t.Context())
			require.NoError(t, err)
			require.Empty(t, subjects)
			require.Empty(t, errs)
			require.NotEmpty(t, seen())
			require.Equal(t, tc.want, seen()[0])
		})
	}
}

// A password given in the URL never shows in a message: not in the
// registry's name, not in the client's error text.
func TestURLPasswordNotInMessages(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	reg, err := Open(Config{URLs: []string{"http://bob:s3cret@" + addr}})
	require.NoError(t, err)
	require.NotContains(t, reg.URLs(), "s3cret")
	_, _, _, err = reg.NewDecoder(t.Context()).Decode(nil, wire(1, []byte{0}))
	require.True(t, IsUnreachable(err))
	require.NotContains(t, err.Error(), "s3cret")
	_, err = reg.Encode(t.Context(), Ref{Subject: "x"}, []byte(`{}`))
	require.Error(t, err)
	require.NotContains(t, err.Error(), "s3cret")
	_, _, _, err = reg.Subjects(t.Context())
	require.Error(t, err)
	require.NotContains(t, err.Error(), "s3cret")
}
