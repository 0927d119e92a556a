package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	type piece struct {
		Text string
		Line int
	}
	tests := []struct {
		name, in string
		want     []piece
	}{
		{"one document", "a: 1\n", []piece{{"a: 1\n", 1}}},
		{"leading marker stays with its document", "---\na: 1\n", []piece{{"---\na: 1\n", 1}}},
		{"two documents", "a: 1\n---\nb: 2\n", []piece{{"a: 1\n", 1}, {"---\nb: 2\n", 2}}},
		{"marker with a comment", "a: 1\n--- # next\nb: 2", []piece{{"a: 1\n", 1}, {"--- # next\nb: 2", 2}}},
		{"marker with CRLF", "a: 1\r\n---\r\nb: 2\r\n", []piece{{"a: 1\r\n", 1}, {"---\r\nb: 2\r\n", 2}}},
		{"four dashes are content", "a: |\n  x\n----\n", []piece{{"a: |\n  x\n----\n", 1}}},
		{"indented dashes are content", "a: |\n  ---\n  b\n", []piece{{"a: |\n  ---\n  b\n", 1}}},
		{"empty documents", "---\n---\na: 1\n", []piece{{"---\n", 1}, {"---\na: 1\n", 2}}},
		{"nothing", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []piece
			for _, d := range split([]byte(tt.in)) {
				got = append(got, piece{string(d.text), d.line})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("documents mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDocumentBody(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"---\na: 1\n":        "a: 1\n",
		"--- # c\r\na: 1\n":  "a: 1\n",
		"a: 1\n":             "a: 1\n",
		"---":                "",
		"# c\n---\na: 1\n":   "# c\n---\na: 1\n", // split never makes this
		"----\na: 1\n":       "----\na: 1\n",
		"--- \n  kind: x\n":  "  kind: x\n",
		"---\n\n\napi: v1\n": "\n\napi: v1\n",
	} {
		if got := string(document{text: []byte(in)}.body()); got != want {
			t.Errorf("body of %q: got %q, want %q", in, got, want)
		}
	}
}

func TestScanHeader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in  string
		want      header
		skippable bool
	}{
		{"CRD", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  names:\n    kind: Kustomization\n", header{"apiextensions.k8s.io/v1", "CustomResourceDefinition"}, true},
		{"Flux Kustomization", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n", header{"kustomize.toolkit.fluxcd.io/v1", "Kustomization"}, false},
		{"kustomize's Kustomization", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n", header{"kustomize.config.k8s.io/v1beta1", "Kustomization"}, true},
		{"Flux's prototype API is decoded, to be refused", "apiVersion: kustomize.fluxcd.io/v1alpha1\nkind: Kustomization\n", header{"kustomize.fluxcd.io/v1alpha1", "Kustomization"}, false},
		{"a typo in the group is decoded, to be refused", "apiVersion: kustomize.toolkit.flux.io/v1\nkind: Kustomization\n", header{"kustomize.toolkit.flux.io/v1", "Kustomization"}, false},
		{"any kind of Flux's group is decoded", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomisation\n", header{"kustomize.toolkit.fluxcd.io/v1", "Kustomisation"}, false},
		{"Flux's other groups are not", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n", header{"helm.toolkit.fluxcd.io/v2", "HelmRelease"}, true},
		{"ConfigMap", "kind: ConfigMap # settings\napiVersion: \"v1\"\n", header{"v1", "ConfigMap"}, false},
		{"Secret of another group", "apiVersion: example.com/v1\nkind: Secret\n", header{"example.com/v1", "Secret"}, true},
		{"kind alone decides when it is not wanted", "kind: Deployment\n", header{"", "Deployment"}, true},
		{"kind alone cannot rule out a Kustomization", "kind: Kustomization\n", header{"", "Kustomization"}, false},
		{"no header", "resources:\n- a.yaml\n", header{}, false},
		{"flow style", "{apiVersion: v1, kind: Namespace}\n", header{}, false},
		{"quoted keys", "\"kind\": Namespace\n", header{}, false},
		{"kind twice", "kind: Namespace\nkind: Kustomization\n", header{"", ""}, false},
		{"kind not plain", "kind: [Namespace]\n", header{"", ""}, false},
		{"indented lines are not the header", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n", header{"v1", "List"}, true},
		{"comments are not the header", "# kind: Secret\nkind: Namespace\n", header{"", "Namespace"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := scanHeader([]byte(tt.in))
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if got.skippable() != tt.skippable {
				t.Errorf("skippable: got %v, want %v", got.skippable(), tt.skippable)
			}
		})
	}
}
