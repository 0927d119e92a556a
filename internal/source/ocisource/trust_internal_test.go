package ocisource

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// The public-good trusted root read through a TUF repository that does
// not answer fails naming that repository (the run's error then says
// which source could not be verified, and why).
func TestTrustedRootFromUnreachableTUF(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	mirror := srv.URL
	srv.Close() // nothing listens there any more
	_, err := trustedRootFromTUF(mirror, filepath.Join(t.TempDir(), "tuf"))
	if err == nil || !strings.Contains(err.Error(), "read through TUF from "+mirror) {
		t.Fatalf("%v, want an error naming %s", err, mirror)
	}
}
