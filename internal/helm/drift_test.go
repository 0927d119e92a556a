package helm

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

func deployment(name string, replicas int64, labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "apps", "labels": labels, "annotations": map[string]any{"a/b": "git"}},
		"spec":     map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "web:1"}}}}},
	}}
}

func TestKeepIgnoredDrift(t *testing.T) {
	t.Parallel()
	rules := func(js string) []IgnoreRule {
		r, err := readIgnoreRules(json.RawMessage(js))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	live := deployment("web", 7, map[string]any{"tier": "web"})
	live.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "web:hotfix"
	delete(live.Object["metadata"].(map[string]any), "annotations")
	for _, tc := range []struct {
		name  string
		rules string
		want  []string // paths taken from live
		check func(d *unstructured.Unstructured) string
	}{
		{name: "replicas of every object", rules: `{"ignore":[{"paths":["/spec/replicas"]}]}`, want: []string{"/spec/replicas"},
			check: func(d *unstructured.Unstructured) string {
				return cmp.Diff(int64(7), d.Object["spec"].(map[string]any)["replicas"])
			}},
		{name: "a list item's field", rules: `{"ignore":[{"paths":["/spec/template/spec/containers/0/image"]}]}`, want: []string{"/spec/template/spec/containers/0/image"},
			check: func(d *unstructured.Unstructured) string {
				img, _ := object.PointerGet(d.Object, []string{"spec", "template", "spec", "containers", "0", "image"})
				return cmp.Diff("web:hotfix", img)
			}},
		{name: "removed live: left out", rules: `{"ignore":[{"paths":["/metadata/annotations/a~1b"]}]}`, want: []string{"/metadata/annotations/a~1b"},
			check: func(d *unstructured.Unstructured) string { return cmp.Diff(map[string]string{}, d.GetAnnotations()) }},
		{name: "target by kind and name regexp", rules: `{"ignore":[{"paths":["/spec/replicas"],"target":{"kind":"Deployment","name":"w.b"}}]}`, want: []string{"/spec/replicas"}},
		{name: "target by label", rules: `{"ignore":[{"paths":["/spec/replicas"],"target":{"labelSelector":"tier=web"}}]}`, want: []string{"/spec/replicas"}},
		{name: "another kind", rules: `{"ignore":[{"paths":["/spec/replicas"],"target":{"kind":"StatefulSet"}}]}`},
		{name: "name is anchored", rules: `{"ignore":[{"paths":["/spec/replicas"],"target":{"name":"we"}}]}`},
		{name: "absent both sides", rules: `{"ignore":[{"paths":["/spec/paused"]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := deployment("web", 2, map[string]any{"tier": "web"})
			got := KeepIgnoredDrift(d, live, rules(tc.rules))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				if diff := tc.check(d); diff != "" {
					t.Errorf("desired after (-want +got):\n%s", diff)
				}
			}
			if len(tc.want) == 0 && d.Object["spec"].(map[string]any)["replicas"] != int64(2) {
				t.Errorf("an object no rule selects changed: %v", d.Object["spec"])
			}
		})
	}
	if got := KeepIgnoredDrift(deployment("web", 2, nil), nil, rules(`{"ignore":[{"paths":["/spec/replicas"]}]}`)); got != nil {
		t.Errorf("no live object: kept %v", got)
	}
}

func TestReadIgnoreRulesRefusesByName(t *testing.T) {
	t.Parallel()
	for js, want := range map[string]string{
		`{"ignore":[{"paths":["spec/replicas"]}]}`:                                         "spec.driftDetection.ignore[0].paths[0]: \"spec/replicas\" is not a JSON pointer",
		`{"ignore":[{"paths":[]}]}`:                                                        "spec.driftDetection.ignore[0].paths: none given",
		`{"ignore":[{"paths":["/a"],"target":{"name":"("}}]}`:                              "spec.driftDetection.ignore[0].target: name:",
		`{"ignore":[{"paths":["/a"]},{"paths":["/a"],"target":{"labelSelector":"a in"}}]}`: "spec.driftDetection.ignore[1].target: labelSelector:",
	} {
		if _, err := readIgnoreRules(json.RawMessage(js)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", js, err, want)
		}
	}
	if r, err := readIgnoreRules(json.RawMessage(`{"mode":"enabled"}`)); err != nil || r != nil {
		t.Errorf("mode alone: %v %v", r, err)
	}
}
