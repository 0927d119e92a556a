package images

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// fakeResolver resolves refs, or "ref secret,…" for a pod with
// imagePullSecrets.
type fakeResolver map[string]string

func (f fakeResolver) Digest(_ context.Context, ref string, pullSecrets []string) (string, error) {
	key := ref
	if len(pullSecrets) > 0 {
		key += " " + strings.Join(pullSecrets, ",")
	}
	if d, ok := f[key]; ok {
		return d, nil
	}
	return "", errors.New("MANIFEST_UNKNOWN")
}

func TestResolve(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {template: {spec: {initContainers: [{name: init, image: 'busybox:1'}], containers: [{name: web, image: 'web:1'}, {name: pinned, image: 'proxy@sha256:aaa'}]}}}"),
		obj(t, "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: backup}\nspec: {jobTemplate: {spec: {template: {spec: {containers: [{name: backup, image: 'web:1'}]}}}}}"),
		obj(t, "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: db}\nspec: {image: 'db:16'}"),
		obj(t, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: private, namespace: shop}\nspec: {template: {spec: {imagePullSecrets: [{name: regcred}, {name: other}], containers: [{name: app, image: 'web:1'}]}}}"),
	}
	err := Resolve(t.Context(), objs, fakeResolver{"busybox:1": "sha256:b", "web:1": "sha256:w", "web:1 regcred,other": "sha256:p"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range objs {
		for _, c := range Of(u) {
			got = append(got, c.Image)
		}
	}
	want := []string{"busybox:1@sha256:b", "web:1@sha256:w", "proxy@sha256:aaa", "web:1@sha256:w", "web:1@sha256:p"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if img, _, _ := unstructured.NestedString(objs[2].Object, "spec", "image"); img != "db:16" {
		t.Errorf("a custom resource's image field was changed: %s", img)
	}

	missing := []*unstructured.Unstructured{obj(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\nspec: {containers: [{name: app, image: 'gone:1'}]}")}
	err = Resolve(t.Context(), missing, fakeResolver{})
	if err == nil || !strings.Contains(err.Error(), "Pod/shop/p: container app: resolving image gone:1: MANIFEST_UNKNOWN") {
		t.Errorf("error %v", err)
	}
}

// Against a registry served in the test: the tag's manifest digest, as
// the registry names it; a tag it does not have is an error.
func TestRegistryDigest(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	digest := ocitest.Push(t, reg.Host+"/shop/web:1.4", ocitest.Flux(t, map[string]string{"a": "b"}, "src", "rev"), "", "", nil)
	got, err := Registry{}.Digest(t.Context(), reg.Host+"/shop/web:1.4", nil)
	if err != nil || got != digest {
		t.Errorf("Digest = %s, %v; want %s", got, err, digest)
	}
	if _, err := (Registry{}).Digest(t.Context(), reg.Host+"/shop/web:9", nil); err == nil {
		t.Errorf("a missing tag resolved")
	}
}

// A registry that wants credentials gets those of the Secret the pod's
// imagePullSecrets name, as the configuration maps it (--oci-secret),
// for that registry's host only; a refusal says so, and no error shows
// the credentials.
func TestRegistryDigestWithPullSecrets(t *testing.T) {
	reg := helmtest.NewRegistryWithAuth(t, "robot", "s3cr3t-pass")
	ref := reg.Host + "/shop/web:1.4"
	digest := ocitest.Push(t, ref, ocitest.Flux(t, map[string]string{"a": "b"}, "src", "rev"), "robot", "s3cr3t-pass", nil)
	r := Registry{Secrets: map[string]ocisource.Auth{
		"regcred":   ocisource.BasicAuth(reg.Host, "robot", "s3cr3t-pass"),
		"wrong":     ocisource.BasicAuth(reg.Host, "robot", "not-the-pass"),
		"elsewhere": ocisource.BasicAuth("registry.example", "robot", "s3cr3t-pass"),
	}}
	for _, tc := range []struct {
		name        string
		pullSecrets []string
		wantErr     string
	}{
		{"the pod's pull secret", []string{"regcred"}, ""},
		{"the second pull secret", []string{"unmapped", "regcred"}, ""},
		{"no pull secret", nil, "no credentials for its registry were given"},
		{"a pull secret not mapped", []string{"unmapped"}, "no credentials for its registry were given"},
		{"credentials for another host", []string{"elsewhere"}, "no credentials for its registry were given"},
		{"credentials refused", []string{"wrong"}, "the credentials given for its registry were refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Digest(t.Context(), ref, tc.pullSecrets)
			if tc.wantErr == "" {
				if err != nil || got != digest {
					t.Errorf("Digest = %s, %v; want %s", got, err, digest)
				}
				return
			}
			var ae *ocisource.AuthError
			if err == nil || !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want an *AuthError saying %q", err, tc.wantErr)
			}
			for _, secret := range []string{"s3cr3t-pass", "not-the-pass"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows a credential: %v", err)
				}
			}
		})
	}
}
