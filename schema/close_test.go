package schema

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCloseDropsTheRegistryConnections: after a request the client keeps
// its connection alive; Close ends it, so a shell that switches clusters
// with \connect does not keep the old registry's sockets open.
func TestCloseDropsTheRegistryConnections(t *testing.T) {
	closed := make(chan struct{}, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[]`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()
	r, err := Open(Config{URLs: []string{srv.URL}})
	require.NoError(t, err)
	_, _, _, err = r.Subjects(context.Background())
	require.NoError(t, err)
	select {
	case <-closed:
		t.Fatal("the connection closed before Close: nothing here is tested")
	default:
	}
	r.Close()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the registry connection is still open 10 s after Close")
	}
	var none *Registry
	none.Close() // no registry configured: a no-op, as the shell calls it
}
