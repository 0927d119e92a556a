package ocisource_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/sourcetest"
)

func hostPath(u string) string { return strings.TrimPrefix(u, "http://") }

// A registry's answer to a failed request is never quoted: what an
// internal service behind it said would land in the PR comment.
func TestPullErrorBodyNotQuoted(t *testing.T) {
	const body = "INTERNAL-METADATA-aws-secret-4f1e"
	for _, code := range []int{http.StatusUnauthorized, http.StatusNotFound, http.StatusInternalServerError} {
		_, err := ocisource.Pull(t.Context(), ocisource.Options{URL: "oci://" + hostPath(sourcetest.Failing(t, code, body)) + "/app", Insecure: true, Dir: filepath.Join(t.TempDir(), "a")})
		if err == nil || strings.Contains(err.Error(), body) {
			t.Errorf("%d: %v", code, err)
		}
	}
}

// A public registry that redirects to an internal address is refused
// before anything is sent there.
func TestPullRedirectToInternalRefused(t *testing.T) {
	internal, hits := sourcetest.Internal(t)
	public := sourcetest.Redirecting(t, internal)
	sourcetest.Public(t, public)
	_, err := ocisource.Pull(t.Context(), ocisource.Options{URL: "oci://" + hostPath(public) + "/app", Insecure: true, Dir: filepath.Join(t.TempDir(), "a")})
	var re *fetch.RedirectError
	if !errors.As(err, &re) {
		t.Fatalf("error %v, want a refused redirect", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the internal address was sent %d requests", n)
	}
}

// A registry that never answers ends the pull at its deadline.
func TestPullSilentRegistry(t *testing.T) {
	_, err := ocisource.Pull(t.Context(), ocisource.Options{URL: "oci://" + hostPath(sourcetest.Silent(t)) + "/app", Insecure: true, Dir: filepath.Join(t.TempDir(), "a"), Timeout: 100 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the deadline", err)
	}
}
