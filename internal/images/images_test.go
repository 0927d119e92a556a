package images

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

func obj(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(text), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const pod = "{initContainers: [{name: init, image: 'busybox:1'}], containers: [{name: app, image: 'app:1'}, {name: sidecar, image: 'proxy:2'}]}"

func TestOf(t *testing.T) {
	both := []Container{{"init", "busybox:1", true}, {"app", "app:1", false}, {"sidecar", "proxy:2", false}}
	for _, tc := range []struct {
		name, text string
		want       []Container
	}{
		{"Pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: " + pod, both},
		{"Deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: " + pod + "}}", both},
		{"StatefulSet", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: d}\nspec: {template: {spec: " + pod + "}}", both},
		{"DaemonSet", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec: {template: {spec: " + pod + "}}", both},
		{"ReplicaSet", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: d}\nspec: {template: {spec: " + pod + "}}", both},
		{"Job", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: d}\nspec: {template: {spec: " + pod + "}}", both},
		{"CronJob", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: d}\nspec: {jobTemplate: {spec: {template: {spec: " + pod + "}}}}", both},
		{"a custom resource's image field is not guessed", "apiVersion: example.com/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {image: 'x:1', template: {spec: " + pod + "}}", nil},
		{"a ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {image: 'x:1'}", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Of(obj(t, tc.text))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestChangedAndGrouped(t *testing.T) {
	deploy := func(name, app, sidecar string) *unstructured.Unstructured {
		s := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name + ", namespace: shop}\nspec: {template: {spec: {containers: [{name: app, image: '" + app + "'}"
		if sidecar != "" {
			s += ", {name: sidecar, image: '" + sidecar + "'}"
		}
		return obj(t, s+"]}}}")
	}
	id := func(name string) object.ID {
		return object.ID{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: name}
	}
	var all []Change
	all = append(all, Changed(id("b"), deploy("b", "app:1", "proxy:1"), deploy("b", "app:2", ""))...)
	all = append(all, Changed(id("a"), deploy("a", "app:1", ""), deploy("a", "app:2", ""))...)
	all = append(all, Changed(id("c"), nil, deploy("c", "app:2", ""))...)
	all = append(all, Changed(id("d"), deploy("d", "app:2", ""), deploy("d", "app:2", ""))...)
	got := Group(all, func(object.ID) string { return "HelmRelease/shop/app" })
	want := []result.ImageChange{
		{Container: "app", From: "app:1", To: "app:2", Objects: []object.ID{id("a"), id("b")}, Release: "HelmRelease/shop/app"},
		{Container: "sidecar", From: "proxy:1", Objects: []object.ID{id("b")}, Release: "HelmRelease/shop/app"},
		{Container: "app", To: "app:2", Objects: []object.ID{id("c")}, Release: "HelmRelease/shop/app"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
