package source

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ecr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testfs"
)

// An OCIRepository not mapped is pulled at its spec.ref (once, however
// many units name it) and built from there, with the artifact's
// revision; what cannot be pulled fails naming the OCIRepository, its
// URL and ref, and the flag that gives credentials.
func TestResolvePullsOCIRepositories(t *testing.T) {
	t.Parallel()
	const password = "oci-right-0001"
	reg := helmtest.NewRegistryWithAuth(t, "flux", password)
	push := func(repo, tag, content string) string {
		return ocitest.Push(t, reg.Host+"/"+repo+":"+tag, ocitest.Flux(t, map[string]string{"apps/web/cm.yaml": content}, "https://github.com/acme/app", "main@sha1:abc"), "flux", password, nil)
	}
	v1 := push("manifests", "1.0.0", "kind: ConfigMap # one\n")
	v2 := push("manifests", "1.1.0", "kind: ConfigMap # two\n")
	latest := push("manifests", "latest", "kind: ConfigMap # latest\n")
	auth := func(pw string) ocisource.Auth {
		a, err := ocisource.ParseAuth([]byte(`{"auths": {"` + reg.Host + `": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("flux:"+pw)) + `"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	url := "oci://" + reg.Host + "/manifests"
	oci := func(name, url string, spec config.OCISpec) *config.Source {
		return &config.Source{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: name}, File: "clusters/prod/sources.yaml", Line: 7, URL: url, OCI: &spec}
	}
	ref := func(name string) config.SourceRef {
		return config.SourceRef{Kind: "OCIRepository", Namespace: "flux-system", Name: name}
	}
	set := &config.Set{Sources: []*config.Source{
		oci("latest", url, config.OCISpec{SecretName: "regcred"}),
		oci("semver", url, config.OCISpec{SemVer: "1.x", SecretName: "regcred"}),
		oci("digest", url, config.OCISpec{Digest: v1, Tag: "latest", SecretName: "regcred"}),
		oci("wrong", url, config.OCISpec{SecretName: "wrong"}),
		oci("nosecret", url, config.OCISpec{}),
		oci("unmapped", url, config.OCISpec{SecretName: "unmapped"}),
		oci("verified", url, config.OCISpec{Unsupported: []string{"spec.verify", "spec.provider aws"}}),
		oci("nourl", "", config.OCISpec{}),
		oci("notag", url, config.OCISpec{Tag: "2.0.0", SecretName: "regcred"}),
		oci("account", url, config.OCISpec{ServiceAccountName: "flux"}),
		oci("bareaccount", url, config.OCISpec{ServiceAccountName: "bare"}),
		oci("noaccount", url, config.OCISpec{ServiceAccountName: "nobody"}),
		oci("badaccount", url, config.OCISpec{ServiceAccountName: "badpull"}),
		oci("secretfirst", url, config.OCISpec{SecretName: "regcred", ServiceAccountName: "nobody"}),
	}}
	secrets := map[string]ocisource.Auth{"regcred": auth(password), "wrong": auth("oci-wrong-0002")}
	// The accounts of the cluster: flux's pull secrets are another
	// registry's, then this one's (merged, in order).
	other := func() ocisource.Auth {
		a, err := ocisource.ParseAuth([]byte(`{"auths": {"elsewhere.example": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("x:y")) + `"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}()
	secrets["elsewhere"] = other
	accounts := func(_ context.Context, namespace, name string) ([]string, bool, error) {
		switch namespace + "/" + name {
		case "flux-system/flux":
			return []string{"elsewhere", "regcred"}, true, nil
		case "flux-system/bare":
			return nil, true, nil
		case "flux-system/badpull":
			return []string{"unmapped"}, true, nil
		}
		return nil, false, nil
	}
	for _, tc := range []struct {
		name     string
		source   string
		revision string
		content  string
		err      []string
	}{
		{name: "latest", source: "latest", revision: "latest@" + latest, content: "# latest"},
		{name: "semver", source: "semver", revision: "1.1.0@" + v2, content: "# two"},
		{name: "digest", source: "digest", revision: v1, content: "# one"},
		{name: "wrong credentials", source: "wrong", err: []string{
			"OCIRepository flux-system/wrong (clusters/prod/sources.yaml:7, " + url + " at tag latest)",
			"the credentials given for spec.secretRef were refused", "give the credentials of Secret wrong:"}},
		{name: "no credentials", source: "nosecret", err: []string{"no credentials were given", "name a Secret in spec.secretRef and give its credentials"}},
		{name: "Secret not given", source: "unmapped", err: []string{"spec.secretRef names Secret unmapped, which is neither in the configuration's files nor in the cluster: give its credentials"}},
		{name: "fields not honoured", source: "verified", err: []string{"sets spec.verify, spec.provider aws, which kustomize-deploy does not honour"}},
		{name: "no URL", source: "nourl", err: []string{"has no spec.url"}},
		{name: "no such tag", source: "notag", err: []string{"at tag 2.0.0)", "MANIFEST_UNKNOWN"}},
		{name: "an account's pull secrets", source: "account", revision: "latest@" + latest, content: "# latest"},
		{name: "an account without pull secrets", source: "bareaccount", err: []string{"no credentials were given"}},
		{name: "no such account", source: "noaccount", err: []string{"spec.serviceAccountName: ServiceAccount flux-system/nobody is not in the cluster"}},
		{name: "an account's pull secret not found", source: "badaccount", err: []string{"spec.serviceAccountName: ServiceAccount flux-system/badpull's imagePullSecrets names Secret unmapped, which is neither in the configuration's files nor in the cluster"}},
		{name: "secretRef before the account", source: "secretfirst", revision: "latest@" + latest, content: "# latest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Resolver{set: set, root: t.TempDir(), revision: "abc123", fetcher: &fetcher{ociSecrets: secrets, accounts: accounts}}
			defer r.Close()
			u := &config.Unit{Ref: config.Ref{Namespace: "apps", Name: "web"}, File: "clusters/prod/web.yaml", Line: 3, Source: ref(tc.source)}
			got, err := r.Resolve(t.Context(), u)
			if len(tc.err) > 0 {
				var se *Error
				if !errors.As(err, &se) {
					t.Fatalf("got %+v, %v; want a *Error", got, err)
				}
				for _, want := range tc.err {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				if strings.Contains(err.Error(), "oci-wrong") || strings.Contains(err.Error(), password) {
					t.Errorf("error %q shows a password", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Checkout || got.Revision != tc.revision || got.RevisionTime.IsZero() {
				t.Errorf("got %+v, want revision %s", got, tc.revision)
			}
			data, err := os.ReadFile(filepath.Join(got.Root, "apps", "web", "cm.yaml"))
			if err != nil || !strings.Contains(string(data), tc.content) {
				t.Errorf("apps/web/cm.yaml = %q, %v; want %q", data, err, tc.content)
			}
			if notes := r.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "is pulled from "+url+": revision "+tc.revision+" (origin revision main@sha1:abc of https://github.com/acme/app)") {
				t.Errorf("notes %q", notes)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(got.Root); !os.IsNotExist(err) {
				t.Errorf("Close left %s (%v)", got.Root, err)
			}
		})
	}
}

// Units (and an ArtifactGenerator) naming one OCIRepository: one pull,
// one tree, even at once.
func TestResolvePullsOnce(t *testing.T) {
	t.Parallel()
	var pulls sync.Map
	reg := helmtest.NewRegistry(t)
	ocitest.Push(t, reg.Host+"/manifests:latest", ocitest.Flux(t, map[string]string{"web/cm.yaml": "kind: ConfigMap\n"}, "", ""), "", "", nil)
	src := &config.Source{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: "manifests"}, File: "s.yaml", Line: 1, URL: "oci://" + reg.Host + "/manifests", OCI: &config.OCISpec{}}
	ref := config.SourceRef{Kind: "OCIRepository", Namespace: "flux-system", Name: "manifests"}
	set := &config.Set{Sources: []*config.Source{src}, Generators: []*config.Generator{{
		Ref: config.Ref{Namespace: "flux-system", Name: "gen"}, File: "g.yaml", Line: 1,
		Sources:   []config.GeneratorSource{{Alias: "m", Source: ref}},
		Artifacts: []config.Artifact{{Name: "web", Copy: []config.Copy{{From: "@m/web/**", To: "@artifact/", Strategy: config.StrategyOverwrite}}}},
	}}}
	r := &Resolver{set: set, root: t.TempDir(), fetcher: &fetcher{}}
	defer r.Close()
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := r.Resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "apps", Name: name}, Source: ref})
			if err != nil {
				t.Error(err)
				return
			}
			pulls.Store(got.Root, true)
		}()
	}
	wg.Wait()
	roots := 0
	pulls.Range(func(_, _ any) bool { roots++; return true })
	if roots != 1 {
		t.Errorf("%d roots: one pull, one tree", roots)
	}
	art, err := r.Resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "apps", Name: "gen"}, Source: config.SourceRef{Kind: "ExternalArtifact", Namespace: "flux-system", Name: "web"}})
	if err != nil {
		t.Fatal(err)
	}
	if tree := testfs.Read(t, art.Root); tree["cm.yaml"] != "kind: ConfigMap\n" || !strings.HasPrefix(art.Revision, "latest@sha256:") {
		t.Errorf("artifact %v, revision %q; want the OCIRepository's web/ and its revision", tree, art.Revision)
	}
	if notes := r.Notes(); len(notes) != 1 {
		t.Errorf("notes %q: want one note of the pull", notes)
	}
}

// An OCIRepository with provider aws is pulled with an ECR token, from
// an ECR registry only: a URL naming any other host is refused by name
// before any credential is minted; offline, the login takes the
// environment's credentials only.
func TestResolvePullsWithProviderAWS(t *testing.T) {
	t.Parallel()
	const token = "ecr-token-0001"
	const ecrHost = "123456789012.dkr.ecr.eu-west-1.amazonaws.com"
	reg := helmtest.NewRegistryWithAuth(t, "AWS", token)
	ocitest.Push(t, reg.Host+"/manifests:latest", ocitest.Flux(t, map[string]string{"apps/web/cm.yaml": "kind: ConfigMap\n"}, "", ""), "AWS", token, nil)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, reg.Host)
	}
	oci := func(name, host string) *config.Source {
		return &config.Source{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: name}, File: "sources.yaml", Line: 1,
			URL: "oci://" + host + "/manifests", OCI: &config.OCISpec{Provider: "aws", Insecure: true}}
	}
	set := &config.Set{Sources: []*config.Source{oci("ecr", ecrHost), oci("elsewhere", reg.Host)}}
	for _, offline := range []bool{false, true} {
		var asked []string
		var envOnly []bool
		var masked []string
		r := NewResolver(Options{Set: set, Root: t.TempDir(), Fetch: true, Transport: tr,
			Mask:    func(s []string) { masked = append(masked, s...) },
			Offline: func() bool { return offline },
			AWS: func(_ context.Context, host string, o ecr.Options) (string, string, error) {
				asked, envOnly = append(asked, host), append(envOnly, o.EnvironmentOnly)
				return "AWS", token, nil
			}})
		defer r.Close()
		unit := func(name string) *config.Unit {
			return &config.Unit{Ref: config.Ref{Namespace: "apps", Name: name}, Source: config.SourceRef{Kind: "OCIRepository", Namespace: "flux-system", Name: name}}
		}
		got, err := r.Resolve(t.Context(), unit("ecr"))
		if err != nil || !strings.HasPrefix(got.Revision, "latest@sha256:") {
			t.Fatalf("offline %v: %+v, %v", offline, got, err)
		}
		if !slices.Equal(asked, []string{ecrHost}) || !slices.Equal(envOnly, []bool{offline}) || !slices.Contains(masked, token) {
			t.Errorf("offline %v: logged in to %q (environment only %v), masked %q", offline, asked, envOnly, masked)
		}
		_, err = r.Resolve(t.Context(), unit("elsewhere"))
		if err == nil || !strings.Contains(err.Error(), "spec.provider aws: "+reg.Host+" is not an Amazon ECR registry") || len(asked) != 1 {
			t.Errorf("another host: %v, logins %q", err, asked)
		}
	}
}

// An OCIRepository with spec.verify (cosign, a key in the Secret of
// verify.secretRef, read as every source's Secret is) is pulled only
// when signed by the key: a tampered one (another artifact's signature)
// fails its unit with no tree.
func TestResolveVerifiesOCIRepositories(t *testing.T) {
	t.Parallel()
	reg := helmtest.NewRegistry(t)
	repo := reg.Host + "/manifests"
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signed := ocitest.Push(t, repo+":signed", ocitest.Flux(t, map[string]string{"apps/web/cm.yaml": "signed"}, "", ""), "", "", nil)
	ocitest.CosignSign(t, repo, signed, signed, key)
	tampered := ocitest.Push(t, repo+":tampered", ocitest.Flux(t, map[string]string{"apps/web/cm.yaml": "tampered"}, "", ""), "", "", nil)
	ocitest.CosignSign(t, repo, tampered, signed, key)
	oci := func(name, tag string) *config.Source {
		return &config.Source{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: name}, File: "sources.yaml", Line: 1,
			URL: "oci://" + repo, OCI: &config.OCISpec{Tag: tag, Verify: &config.Verify{SecretName: "cosign-pub"}}}
	}
	set := &config.Set{Sources: []*config.Source{oci("signed", "signed"), oci("tampered", "tampered")}}
	lookup := func(_ context.Context, namespace, name string) (map[string]string, bool, error) {
		if namespace == "flux-system" && name == "cosign-pub" {
			return map[string]string{"cosign.pub": ocitest.PublicKeyPEM(t, key)}, true, nil
		}
		return nil, false, nil
	}
	r := NewResolver(Options{Set: set, Root: t.TempDir(), Fetch: true, Secrets: lookup})
	defer r.Close()
	unit := func(name string) *config.Unit {
		return &config.Unit{Ref: config.Ref{Namespace: "apps", Name: name}, Source: config.SourceRef{Kind: "OCIRepository", Namespace: "flux-system", Name: name}}
	}
	if got, err := r.Resolve(t.Context(), unit("signed")); err != nil || !strings.HasPrefix(got.Revision, "signed@") {
		t.Errorf("signed: %+v, %v", got, err)
	}
	got, err := r.Resolve(t.Context(), unit("tampered"))
	if err == nil || got.Root != "" || !strings.Contains(err.Error(), "is not signed by a key of spec.verify.secretRef") {
		t.Errorf("tampered: %+v, %v", got, err)
	}
	var ve *ocisource.VerifyError
	if !errors.As(err, &ve) && !strings.Contains(err.Error(), "a signature of another artifact") {
		t.Errorf("tampered: %v", err)
	}
}

// An OCIRepository with provider gcp is pulled with a Google access
// token, from a Google registry only.
func TestResolvePullsWithProviderGCP(t *testing.T) {
	t.Parallel()
	const token = "ya29.google-token-0001"
	const garHost = "europe-docker.pkg.dev"
	reg := helmtest.NewRegistryWithAuth(t, "oauth2accesstoken", token)
	ocitest.Push(t, reg.Host+"/acme/manifests:latest", ocitest.Flux(t, map[string]string{"apps/web/cm.yaml": "kind: ConfigMap\n"}, "", ""), "oauth2accesstoken", token, nil)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, reg.Host)
	}
	oci := func(name, host string) *config.Source {
		return &config.Source{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: name}, File: "sources.yaml", Line: 1,
			URL: "oci://" + host + "/acme/manifests", OCI: &config.OCISpec{Provider: "gcp", Insecure: true}}
	}
	set := &config.Set{Sources: []*config.Source{oci("gar", garHost), oci("elsewhere", reg.Host)}}
	var asked []string
	r := NewResolver(Options{Set: set, Root: t.TempDir(), Fetch: true, Transport: tr,
		GCP: func(_ context.Context, host string, _ bool) (string, string, error) {
			asked = append(asked, host)
			return "oauth2accesstoken", token, nil
		}})
	defer r.Close()
	unit := func(name string) *config.Unit {
		return &config.Unit{Ref: config.Ref{Namespace: "apps", Name: name}, Source: config.SourceRef{Kind: "OCIRepository", Namespace: "flux-system", Name: name}}
	}
	if got, err := r.Resolve(t.Context(), unit("gar")); err != nil || !strings.HasPrefix(got.Revision, "latest@sha256:") {
		t.Fatalf("%+v, %v", got, err)
	}
	if _, err := r.Resolve(t.Context(), unit("elsewhere")); err == nil || !strings.Contains(err.Error(), "spec.provider gcp: "+reg.Host+" is not a Google registry") || len(asked) != 1 {
		t.Errorf("another host: %v, logins %q", err, asked)
	}
}

// The OCIRepository of Flux's own sync (a FluxInstance's spec.sync,
// as Flux Operator's fleets have it) is this checkout: by the sync's own
// word the artifact is what CI pushes of this repository, so it is not
// pulled, and a note says so.
func TestResolveOCISyncSourceIsTheCheckout(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sync := config.SourceRef{Kind: "OCIRepository", Namespace: "flux-system", Name: "flux-system"}
	set := &config.Set{
		Sources: []*config.Source{{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: "flux-system"}, URL: "oci://ghcr.io/acme/fleet", OCI: &config.OCISpec{Tag: "latest"}}},
		Units:   []*config.Unit{{Name: "flux-system", Ref: config.Ref{Namespace: "flux-system", Name: "flux-system"}, Sync: true, Instance: true, Source: sync}},
	}
	r := &Resolver{set: set, root: root, revision: "main@sha1:abc", fetcher: &fetcher{}}
	src, err := r.Resolve(t.Context(), &config.Unit{Name: "apps", Source: sync, Path: "apps"})
	if err != nil {
		t.Fatal(err)
	}
	if !src.Checkout || src.Root != root || src.Revision != "main@sha1:abc" {
		t.Errorf("source %+v", src)
	}
	if notes := r.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "OCIRepository/flux-system/flux-system is taken as this checkout") {
		t.Errorf("notes %q", notes)
	}
}

// An OCIRepository with provider azure is pulled with the login of its
// Azure Container Registry (the null-GUID user and an ACR refresh
// token), asked for that registry only: another host is refused by name
// before any credential is asked for, and the token is masked.
func TestResolvePullsWithProviderAzure(t *testing.T) {
	t.Parallel()
	const token = "acr-refresh-token-0001"
	const acrHost = "fleet.azurecr.io"
	const user = "00000000-0000-0000-0000-000000000000"
	reg := helmtest.NewRegistryWithAuth(t, user, token)
	ocitest.Push(t, reg.Host+"/acme/manifests:latest", ocitest.Flux(t, map[string]string{"apps/web/cm.yaml": "kind: ConfigMap\n"}, "", ""), user, token, nil)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, reg.Host)
	}
	oci := func(name, host string) *config.Source {
		return &config.Source{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: name}, File: "sources.yaml", Line: 1,
			URL: "oci://" + host + "/acme/manifests", OCI: &config.OCISpec{Provider: "azure", Insecure: true}}
	}
	set := &config.Set{Sources: []*config.Source{oci("acr", acrHost), oci("elsewhere", reg.Host)}}
	var asked, masked []string
	r := NewResolver(Options{Set: set, Root: t.TempDir(), Fetch: true, Transport: tr,
		Mask: func(s []string) { masked = append(masked, s...) },
		Azure: func(_ context.Context, host string, _ bool) (string, string, error) {
			asked = append(asked, host)
			return user, token, nil
		}})
	defer r.Close()
	unit := func(name string) *config.Unit {
		return &config.Unit{Ref: config.Ref{Namespace: "apps", Name: name}, Source: config.SourceRef{Kind: "OCIRepository", Namespace: "flux-system", Name: name}}
	}
	if got, err := r.Resolve(t.Context(), unit("acr")); err != nil || !strings.HasPrefix(got.Revision, "latest@sha256:") {
		t.Fatalf("%+v, %v", got, err)
	}
	if !slices.Contains(masked, token) {
		t.Errorf("masked %q", masked)
	}
	if _, err := r.Resolve(t.Context(), unit("elsewhere")); err == nil || !strings.Contains(err.Error(), "spec.provider azure: "+reg.Host+" is not an Azure Container Registry") || len(asked) != 1 {
		t.Errorf("another host: %v, logins %q", err, asked)
	}
}

// countingTransport counts the requests it carries.
type countingTransport struct {
	mu sync.Mutex
	n  int
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (c *countingTransport) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// A source whose pull Secret or ServiceAccount is missing fails with a
// *fetch.MissingError naming it, before anything reaches the registry;
// resolving it again as the configuration opens answers the same (once
// per run). Again, at a unit's turn, once the object exists, pulls it:
// once for every unit that names it; a source that resolved is not
// pulled again.
func TestAgainPullsASourceWhoseCredentialsAppeared(t *testing.T) {
	t.Parallel()
	const password = "oci-again-7d01"
	reg := helmtest.NewRegistryWithAuth(t, "flux", password)
	ocitest.Push(t, reg.Host+"/manifests:latest", ocitest.Flux(t, map[string]string{"apps/web/cm.yaml": "kind: ConfigMap\n"}, "https://github.com/acme/app", "main@sha1:abc"), "flux", password, nil)
	url := "oci://" + reg.Host + "/manifests"
	oci := func(name string, spec config.OCISpec) *config.Source {
		return &config.Source{Kind: "OCIRepository", Ref: config.Ref{Namespace: "team", Name: name}, File: "tenants/team.yaml", Line: 9, URL: url, OCI: &spec}
	}
	set := &config.Set{Sources: []*config.Source{
		oci("bysecret", config.OCISpec{SecretName: "regcred"}),
		oci("byaccount", config.OCISpec{ServiceAccountName: "flux"}),
	}}
	var mu sync.Mutex
	secrets, accounts := map[string]map[string]string{}, map[string][]string{}
	lookup := func(_ context.Context, namespace, name string) (map[string]string, bool, error) {
		mu.Lock()
		defer mu.Unlock()
		data, ok := secrets[namespace+"/"+name]
		return data, ok, nil
	}
	accountLookup := func(_ context.Context, namespace, name string) ([]string, bool, error) {
		mu.Lock()
		defer mu.Unlock()
		pull, ok := accounts[namespace+"/"+name]
		return pull, ok, nil
	}
	tr := &countingTransport{}
	r := &Resolver{set: set, root: t.TempDir(), fetcher: &fetcher{lookup: lookup, accounts: accountLookup, transport: tr}}
	defer r.Close()
	unit := func(name, source string) *config.Unit {
		return &config.Unit{Ref: config.Ref{Namespace: "team", Name: name}, File: "tenants/team.yaml", Line: 20, Source: config.SourceRef{Kind: "OCIRepository", Namespace: "team", Name: source}}
	}
	for _, tc := range []struct{ source, kind, name string }{{"bysecret", "Secret", "regcred"}, {"byaccount", "ServiceAccount", "flux"}} {
		for range 2 {
			_, err := r.Resolve(t.Context(), unit("app", tc.source))
			var missing *fetch.MissingError
			if !errors.As(err, &missing) || missing.Kind != tc.kind || missing.Namespace != "team" || missing.Name != tc.name {
				t.Fatalf("%s: %v; want a *fetch.MissingError for %s team/%s", tc.source, err, tc.kind, tc.name)
			}
			if !strings.Contains(err.Error(), "OCIRepository team/"+tc.source+" (tenants/team.yaml:9,") {
				t.Errorf("%s: %q does not name the source", tc.source, err)
			}
		}
	}
	if n := tr.count(); n != 0 {
		t.Fatalf("%d requests reached the registry before the credentials existed", n)
	}
	// The earlier unit applies the Secret and the account.
	mu.Lock()
	secrets["team/regcred"] = map[string]string{".dockerconfigjson": `{"auths": {"` + reg.Host + `": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("flux:"+password)) + `"}}}`}
	accounts["team/flux"] = []string{"regcred"}
	mu.Unlock()
	if _, err := r.Resolve(t.Context(), unit("app", "bysecret")); err == nil {
		t.Error("resolved again as the configuration opens: a source is fetched once per run")
	}
	// One unit's turn pulls it; another's naming it reads that pull.
	if src, err := r.Again(t.Context(), unit("app", "bysecret")); err != nil || !strings.HasPrefix(src.Revision, "latest@sha256:") {
		t.Fatalf("at its turn: %+v, %v", src, err)
	}
	pulled := tr.count()
	if pulled == 0 {
		t.Fatal("no request reached the registry")
	}
	if src, err := r.Again(t.Context(), unit("audit", "bysecret")); err != nil || !strings.HasPrefix(src.Revision, "latest@sha256:") || tr.count() != pulled {
		t.Errorf("another unit's turn: %+v, %v; %d requests after %d: pulled again", src, err, tr.count(), pulled)
	}
	// Units at their turns at once: the account's source is pulled once.
	var wg sync.WaitGroup
	got := make([]Tree, 3)
	errs := make([]error, 3)
	for i, name := range []string{"app", "audit", "late"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = r.Again(t.Context(), unit(name, "byaccount"))
		}()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || !strings.HasPrefix(got[i].Revision, "latest@sha256:") {
			t.Fatalf("unit %d at its turn: %+v, %v", i, got[i], errs[i])
		}
	}
	if n := tr.count() - pulled; n != pulled {
		t.Errorf("the account's source took %d requests, one pull %d: pulled more than once", n, pulled)
	}
}
