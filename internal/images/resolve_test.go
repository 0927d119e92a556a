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
)

type fakeResolver map[string]string

func (f fakeResolver) Digest(_ context.Context, ref string) (string, error) {
	if d, ok := f[ref]; ok {
		return d, nil
	}
	return "", errors.New("MANIFEST_UNKNOWN")
}

func TestResolve(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {template: {spec: {initContainers: [{name: init, image: 'busybox:1'}], containers: [{name: web, image: 'web:1'}, {name: pinned, image: 'proxy@sha256:aaa'}]}}}"),
		obj(t, "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: backup}\nspec: {jobTemplate: {spec: {template: {spec: {containers: [{name: backup, image: 'web:1'}]}}}}}"),
		obj(t, "apiVersion: example.com/v1\nkind: Database\nmetadata: {name: db}\nspec: {image: 'db:16'}"),
	}
	err := Resolve(t.Context(), objs, fakeResolver{"busybox:1": "sha256:b", "web:1": "sha256:w"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range objs {
		for _, c := range Of(u) {
			got = append(got, c.Image)
		}
	}
	want := []string{"busybox:1@sha256:b", "web:1@sha256:w", "proxy@sha256:aaa", "web:1@sha256:w"}
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
	got, err := Registry{}.Digest(t.Context(), reg.Host+"/shop/web:1.4")
	if err != nil || got != digest {
		t.Errorf("Digest = %s, %v; want %s", got, err, digest)
	}
	if _, err := (Registry{}).Digest(t.Context(), reg.Host+"/shop/web:9"); err == nil {
		t.Errorf("a missing tag resolved")
	}
}
