package helm_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/sourcetest"
)

func ociHelmRepository(host string) string {
	return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: apps}\nspec:\n  type: oci\n  insecure: true\n  url: oci://" + host + "/charts\n"
}

// A chart registry or repository that never answers ends the release's
// fetch at its deadline, naming the HelmRelease and its source, instead
// of hanging the run.
func TestExpandSilentChartSource(t *testing.T) {
	silent := sourcetest.Silent(t)
	for name, repo := range map[string]string{
		"an OCI registry":          ociHelmRepository(strings.TrimPrefix(silent, "http://")),
		"an HTTP chart repository": repository(silent+"/charts", ""),
	} {
		t.Run(name, func(t *testing.T) {
			in, sources := objs(t, repo, release(webChart))
			_, err := helm.Expand(t.Context(), in, sources, helm.Options{Fetcher: &helm.Fetcher{Timeout: 100 * time.Millisecond}})
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "HelmRelease apps/web (apps/web/release.yaml): HelmRepository apps/charts") {
				t.Fatalf("error %v, want the deadline, naming the release and its repository", err)
			}
		})
	}
}

// A chart layer larger than the limit is refused by the size its
// manifest declares, before a byte of it is read.
func TestExpandHugeChartLayer(t *testing.T) {
	var blobs atomic.Int64
	const manifest = `{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
 "config": {"mediaType": "application/vnd.cncf.helm.config.v1+json", "size": 2, "digest": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},
 "layers": [{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "size": 3221225472, "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"}]}`
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v2/":
		case strings.HasSuffix(r.URL.Path, "/manifests/1.0.0"):
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			_, _ = w.Write([]byte(manifest))
		case strings.Contains(r.URL.Path, "/blobs/"):
			blobs.Add(1)
			http.Error(w, "never", http.StatusTeapot)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(reg.Close)
	in, sources := objs(t, ociHelmRepository(strings.TrimPrefix(reg.URL, "http://")), release(strings.Replace(webChart, `"1.x"`, "1.0.0", 1)))
	_, err := helm.Expand(t.Context(), in, sources, helm.Options{})
	if err == nil || !strings.Contains(err.Error(), "the chart layer is 3221225472 bytes, more than the limit of 33554432 (a chart archive)") {
		t.Fatalf("error %v, want the limit named", err)
	}
	if n := blobs.Load(); n != 0 {
		t.Errorf("%d blob requests", n)
	}
}

// A HelmRepository's basic-auth credentials go to its own origin only:
// a redirect of a chart to another port of the same host gets none.
func TestExpandCredentialsDoNotFollowARedirect(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0"})
	repo.Username, repo.Password = "ci", "repo-pa55-81"
	var got atomic.Value
	got.Store("")
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		_, _ = w.Write(repo.Archive("web", "1.0.0"))
	}))
	t.Cleanup(other.Close)
	repo.Redirect("web-1.0.0.tgz", other.URL+"/web-1.0.0.tgz")
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: repo-auth, namespace: apps}\ndata:\n  username: " + base64.StdEncoding.EncodeToString([]byte("ci")) +
		"\n  password: " + base64.StdEncoding.EncodeToString([]byte("repo-pa55-81")) + "\n"
	in, sources := objs(t, secret, repository(repo.URL, "  secretRef: {name: repo-auth}\n"), release(webChart))
	if _, err := helm.Expand(t.Context(), in, sources, helm.Options{}); err != nil {
		t.Fatal(err)
	}
	if a := got.Load().(string); a != "" {
		t.Errorf("the credentials followed the redirect to another port: %q", a)
	}
}

// A public chart repository that redirects to an internal address is
// refused before anything is sent there, and what was said is not quoted.
func TestExpandRedirectToInternalRefused(t *testing.T) {
	internal, hits := sourcetest.Internal(t)
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0"})
	repo.Redirect("index.yaml", internal+"/latest/meta-data/iam/security-credentials/")
	sourcetest.Public(t, repo.URL)
	in, sources := objs(t, repository(repo.URL, ""), release(webChart))
	_, err := helm.Expand(t.Context(), in, sources, helm.Options{})
	var re *fetch.RedirectError
	if !errors.As(err, &re) || strings.Contains(err.Error(), "instance-role-secret") {
		t.Fatalf("error %v, want a refused redirect", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the internal address was sent %d requests", n)
	}
}

// A chartRef to an OCIRepository with spec.verify (cosign, a key) renders
// only a chart signed by the key; an unsigned one, or one carrying
// another chart's signature, fails the release by name.
func TestExpandVerifiesOCICharts(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	v1 := reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0", AppVersion: "1.0"})
	ocitest.CosignSign(t, reg.Host+"/charts/web", v1, v1, key)
	v2 := reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "2.0.0", AppVersion: "2.0"})
	ocitest.CosignSign(t, reg.Host+"/charts/web", v2, v1, key) // tampered: v1's signature
	reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "3.0.0", AppVersion: "3.0"})
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: cosign-pub, namespace: apps}\nstringData:\n  cosign.pub: |\n" + indent(ocitest.PublicKeyPEM(t, key), "    ")
	source := func(tag string) string {
		return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: web, namespace: apps}\nspec:\n  insecure: true\n  url: oci://" + reg.Host + "/charts/web\n  ref: {tag: " + tag + "}\n  verify:\n    provider: cosign\n    secretRef: {name: cosign-pub}\n"
	}
	chartRef := release("  chartRef: {kind: OCIRepository, name: web}\n")
	for tag, want := range map[string]string{"1.0.0": "", "2.0.0": "a signature of another artifact", "3.0.0": "no cosign signature of sha256:"} {
		in, files := objs(t, secret, source(tag), chartRef)
		out, err := helm.Expand(t.Context(), in, files, helm.Options{})
		if want == "" {
			if err != nil || len(out.Charts) != 1 || out.Charts[0].Version != tag {
				t.Errorf("%s: %v", tag, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "HelmRelease apps/web") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", tag, err, want)
		}
	}
}

func indent(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(prefix + l + "\n")
	}
	return b.String()
}
