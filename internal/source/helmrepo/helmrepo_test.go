package helmrepo_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ecr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/helmrepo"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/sourcetest"
)

var web = filepath.Join("..", "..", "..", "testdata", "charts", "web")

// provider aws: an ECR token for ECR hosts only, refused by name for any
// other before a credential is minted; offline, from the environment
// only.
func TestLogin(t *testing.T) {
	var asked []ecr.Options
	f := &helmrepo.Fetcher{AWS: func(_ context.Context, _ string, o ecr.Options) (string, string, error) {
		asked = append(asked, o)
		return "AWS", "tok", nil
	}}
	if _, err := helmrepo.Login(t.Context(), f, "aws", "oci://127.0.0.1:5000/charts", helmrepo.Credentials{}, false); err == nil || !strings.Contains(err.Error(), "127.0.0.1:5000 is not an Amazon ECR registry") || len(asked) != 0 {
		t.Errorf("another host: %v, %d logins", err, len(asked))
	}
	creds, err := helmrepo.Login(t.Context(), f, "aws", "oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/charts", helmrepo.Credentials{}, true)
	if err != nil || creds.Password != "tok" || len(asked) != 1 || !asked[0].EnvironmentOnly {
		t.Errorf("ECR offline: %+v, %v, %+v", creds, err, asked)
	}
	if creds, err := helmrepo.Login(t.Context(), f, "aws", "oci://attacker.example/charts", helmrepo.Credentials{Username: "u", Password: "p"}, false); err != nil || creds.Password != "p" {
		t.Errorf("a secretRef's credentials win, no login: %+v, %v", creds, err)
	}
}

// A HelmRepository's basic auth goes to its own origin only: not to
// another port a chart is redirected to.
func TestFetchCredentialsStayAtTheOrigin(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: web, Version: "1.0.0"})
	repo.Username, repo.Password = "ci", "repo-pa55-81"
	var got atomic.Value
	got.Store("")
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		_, _ = w.Write(repo.Archive("web", "1.0.0"))
	}))
	t.Cleanup(other.Close)
	repo.Redirect("web-1.0.0.tgz", other.URL+"/web-1.0.0.tgz")
	f := &helmrepo.Fetcher{}
	out, err := f.Fetch(t.Context(), &helmrepo.Repository{Name: "charts", Namespace: "apps", URL: repo.URL}, helmrepo.Credentials{Username: "ci", Password: "repo-pa55-81"}, "web", "1.x")
	if err != nil || out.Version != "1.0.0" {
		t.Fatalf("%+v, %v", out, err)
	}
	if a := got.Load().(string); a != "" {
		t.Errorf("the credentials followed the redirect to another port: %q", a)
	}
}

// A chart registry or repository that never answers ends at the deadline.
func TestFetchSilentSource(t *testing.T) {
	silent := sourcetest.Silent(t)
	f := &helmrepo.Fetcher{Timeout: 100 * time.Millisecond}
	_, err := f.FetchOCI(t.Context(), &helmrepo.OCISource{Kind: "HelmRepository", URL: "oci://" + strings.TrimPrefix(silent, "http://") + "/charts", Insecure: true}, helmrepo.Credentials{}, "web", "1.x")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("OCI: %v", err)
	}
	_, err = f.Fetch(t.Context(), &helmrepo.Repository{URL: silent + "/charts"}, helmrepo.Credentials{}, "web", "1.x")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("HTTP: %v", err)
	}
}

// A public chart repository redirecting inward is refused before a
// request is sent there.
func TestFetchRedirectToInternalRefused(t *testing.T) {
	internal, hits := sourcetest.Internal(t)
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: web, Version: "1.0.0"})
	repo.Redirect("index.yaml", internal+"/latest/meta-data/")
	sourcetest.Public(t, repo.URL)
	_, err := (&helmrepo.Fetcher{}).Fetch(t.Context(), &helmrepo.Repository{URL: repo.URL}, helmrepo.Credentials{}, "web", "1.x")
	var re *fetch.RedirectError
	if !errors.As(err, &re) || hits.Load() != 0 {
		t.Errorf("error %v, %d requests inward", err, hits.Load())
	}
}
