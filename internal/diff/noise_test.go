package diff

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func yamlObj(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(text), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestNoiseOnly(t *testing.T) {
	deploy := func(chart, version, checksum, image, build string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {helm.sh/chart: " + chart + ", app.kubernetes.io/version: \"" + version + "\", app: web}\n" +
			"  annotations: {example.com/build: \"" + build + "\"}\n" +
			"spec:\n  template:\n    metadata:\n      labels: {helm.sh/chart: " + chart + "}\n      annotations: {checksum/config: \"" + checksum + "\"}\n" +
			"    spec:\n      containers: [{name: web, image: \"" + image + "\", env: [{name: A, value: \"" + build + "\"}]}]\n"
	}
	base := deploy("web-1.0.0", "1.0", "aaa", "web:1", "1")
	for _, tc := range []struct {
		name     string
		now      string
		pointers []string
		want     bool
	}{
		{"chart label, version label and checksum", deploy("web-1.1.0", "1.1", "bbb", "web:1", "1"), nil, true},
		{"and an image", deploy("web-1.1.0", "1.1", "bbb", "web:2", "1"), nil, false},
		{"an annotation not folded", deploy("web-1.0.0", "1.0", "aaa", "web:1", "2"), nil, false},
		{"an annotation folded by pointer, not the env that shares its value", deploy("web-1.0.0", "1.0", "aaa", "web:1", "2"), []string{"/metadata/annotations/example.com~1build"}, false},
		{"an annotation and a field folded by pointers with wildcards", deploy("web-1.0.0", "1.0", "aaa", "web:1", "2"),
			[]string{"/metadata/annotations/example.com~1*", "/spec/template/spec/containers/*/env/*/value"}, true},
		{"unchanged is not noise", base, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, now := yamlObj(t, base), yamlObj(t, tc.now)
			if got := (Noise{Pointers: tc.pointers}).Only(old, now); got != tc.want {
				t.Errorf("Only = %t, want %t", got, tc.want)
			}
			if got := yamlObj(t, base); !equalObjects(got, old) {
				t.Errorf("Only changed the object given")
			}
		})
	}
	if (Noise{}).Only(nil, yamlObj(t, base)) || (Noise{}).Only(yamlObj(t, base), nil) {
		t.Errorf("a creation or a deletion is folded")
	}
}

func equalObjects(a, b *unstructured.Unstructured) bool {
	x, _ := yaml.Marshal(a.Object)
	y, _ := yaml.Marshal(b.Object)
	return string(x) == string(y)
}

func TestValidatePointer(t *testing.T) {
	for p, ok := range map[string]bool{"/metadata/labels/x": true, "metadata/labels": false, "": false, "/": false, "/a~1b/*": true} {
		if err := ValidatePointer(p); (err == nil) != ok {
			t.Errorf("ValidatePointer(%q) = %v", p, err)
		}
	}
}
