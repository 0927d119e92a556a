package source

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/sourcetest"
)

// A Kustomization's Bucket is downloaded once per run with the keys of
// its Secret (read as every source's: the configuration's files, the
// cluster), masked; fetching off, it fails naming the Fix; a provider
// not honoured is refused by name.
func TestResolveDownloadsBuckets(t *testing.T) {
	t.Parallel()
	endpoint := sourcetest.S3(t, "fleet", map[string]string{"apps/web/cm.yaml": "kind: ConfigMap\n"}, "AKIABUCKET0001")
	bucket := func(name string, spec config.BucketSpec) *config.Source {
		return &config.Source{Kind: "Bucket", Ref: config.Ref{Namespace: "flux-system", Name: name}, File: "sources.yaml", Line: 1, URL: endpoint + "/fleet", Bucket: &spec}
	}
	set := &config.Set{Sources: []*config.Source{
		bucket("fleet", config.BucketSpec{BucketName: "fleet", Endpoint: endpoint, Insecure: true, SecretName: "bucket-auth"}),
		bucket("gcs", config.BucketSpec{Provider: "gcp", BucketName: "fleet"}),
	}}
	var masked []string
	lookup := func(_ context.Context, namespace, name string) (map[string]string, bool, error) {
		if namespace == "flux-system" && name == "bucket-auth" {
			return map[string]string{"accesskey": "AKIABUCKET0001", "secretkey": "bucket-secret-0001"}, true, nil
		}
		return nil, false, nil
	}
	unit := func(name string) *config.Unit {
		return &config.Unit{Ref: config.Ref{Namespace: "apps", Name: name}, Source: config.SourceRef{Kind: "Bucket", Namespace: "flux-system", Name: name}}
	}
	r := NewResolver(Options{Set: set, Root: t.TempDir(), Fetch: true, Secrets: lookup, Mask: func(s []string) { masked = append(masked, s...) }})
	defer r.Close()
	got, err := r.Resolve(t.Context(), unit("fleet"))
	if err != nil || !strings.HasPrefix(got.Revision, "sha256:") || got.Checkout {
		t.Fatalf("%+v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(got.Root, "apps/web/cm.yaml")); err != nil {
		t.Errorf("the object is not in the tree: %v", err)
	}
	if !slices.Contains(masked, "bucket-secret-0001") {
		t.Errorf("the secret key is not masked: %q", masked)
	}
	if _, err := r.Resolve(t.Context(), unit("gcs")); err == nil || !strings.Contains(err.Error(), "sets spec.provider gcp, which kustomize-deploy does not honour") {
		t.Errorf("provider gcp: %v", err)
	}
	off := NewResolver(Options{Set: set, Root: t.TempDir()})
	if _, err := off.Resolve(t.Context(), unit("fleet")); FixOf(err) != FixFetchSources {
		t.Errorf("fetching off: %v", err)
	}
}
