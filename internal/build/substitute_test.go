package build

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// configMap returns a ConfigMap manifest with extra metadata lines and data.
func configMap(metadata, data string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: web\n" + metadata + "data:\n" + data
}

func parseObject(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSubstitute(t *testing.T) {
	vars := map[string]string{"ENV": "prod", "REPLICAS": "3", "MULTI": "a\nb"}
	for _, tc := range []struct {
		name    string
		in      string
		vars    map[string]string
		always  bool   // substituteStrategy: Always
		want    string // data section after substitution
		wantErr []string
	}{
		{name: "plain", in: configMap("", "  env: ${ENV}\n  bare: $ENV\n"), want: "bare: $ENV\nenv: prod\n"},
		{name: "assign default", in: configMap("", "  region: ${REGION:=eu-west-1}\n"), want: "region: eu-west-1\n"},
		{name: "use default", in: configMap("", "  region: ${REGION:-eu-west-1}\n  env: ${ENV:-dev}\n"), want: "env: prod\nregion: eu-west-1\n"},
		{name: "escape", in: configMap("", "  literal: $${ENV}\n"), want: "literal: ${ENV}\n"},
		{name: "undefined is empty", in: configMap("", "  url: https://${HOST}/x\n"), want: "url: https:///x\n"},
		// The YAML is re-rendered before substitution, so source quotes are gone, as in Flux.
		{name: "undefined alone is null", in: configMap("", "  region: \"${REGION}\"\n"), want: "region: null\n"},
		{name: "newlines removed", in: configMap("", "  multi: ${MULTI}\n"), want: "multi: ab\n"},
		{name: "no vars, nothing happens", vars: map[string]string{}, in: configMap("", "  env: ${ENV}\n  literal: $${ENV}\n"), want: "env: ${ENV}\nliteral: $${ENV}\n"},
		{name: "no vars, always: defaults apply", vars: map[string]string{}, always: true, in: configMap("", "  region: ${REGION:=eu-west-1}\n  literal: $${ENV}\n"), want: "literal: ${ENV}\nregion: eu-west-1\n"},
		{
			name: "disabled by our annotation",
			in:   configMap("  annotations:\n    kustomize-deploy.dev/substitute: disabled\n", "  env: ${ENV}\n"),
			want: "env: ${ENV}\n",
		},
		{
			name: "disabled by Flux's annotation",
			in:   configMap("  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\n", "  env: ${ENV}\n"),
			want: "env: ${ENV}\n",
		},
		{
			name: "disabled by Flux's label",
			in:   configMap("  labels:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\n", "  env: ${ENV}\n"),
			want: "env: ${ENV}\n",
		},
		{
			name: "ours re-enables over Flux's",
			in:   configMap("  annotations:\n    kustomize-deploy.dev/substitute: enabled\n    kustomize.toolkit.fluxcd.io/substitute: disabled\n", "  env: ${ENV}\n"),
			want: "env: prod\n",
		},
		{name: "invalid variable name", vars: map[string]string{"1ENV": "x"}, in: configMap("", "  env: x\n"), wantErr: []string{`"1ENV" is invalid`}},
		{name: "bad expression", in: configMap("", "  env: ${ENV\n"), wantErr: []string{"ConfigMap/web/app in apps/web/configmap.yaml", "variable substitution failed"}},
		{
			name:    "result is not YAML",
			vars:    map[string]string{"VALUE": "[unclosed"},
			in:      configMap("", "  key: ${VALUE}\n"),
			wantErr: []string{"ConfigMap/web/app in apps/web/configmap.yaml", "substituted YAML is invalid"},
		},
		{
			name:    "a name made of a variable without a value",
			vars:    map[string]string{"ENV": "prod"},
			in:      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${APP_NAME}\ndata:\n  env: ${ENV}\n",
			wantErr: []string{"missing metadata.name", "(no value for APP_NAME)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := parseObject(t, tc.in)
			sources := map[object.ID]string{object.IDOf(u): "apps/web/configmap.yaml"}
			v := tc.vars
			if v == nil {
				v = vars
			}
			err := Substitute([]*unstructured.Unstructured{u}, v, sources, tc.always)
			if tc.wantErr != nil {
				wantErr(t, err, tc.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := kyaml.Marshal(u.Object["data"])
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != tc.want {
				t.Errorf("data after substitution:\n%s\nwant:\n%s", data, tc.want)
			}
		})
	}
}

func TestSubstituteKeepsTypesAndRekeysSources(t *testing.T) {
	u := parseObject(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-${ENV}\nspec:\n  replicas: ${REPLICAS}\n")
	sources := map[object.ID]string{object.IDOf(u): "apps/web/deployment.yaml"}
	if err := Substitute([]*unstructured.Unstructured{u}, map[string]string{"ENV": "prod", "REPLICAS": "3"}, sources, false); err != nil {
		t.Fatal(err)
	}
	if replicas, ok, err := unstructured.NestedInt64(u.Object, "spec", "replicas"); !ok || err != nil || replicas != 3 {
		t.Errorf("replicas = %v (%v, %v), want int64 3", replicas, ok, err)
	}
	want := map[object.ID]string{{Group: "apps", Kind: "Deployment", Name: "web-prod"}: "apps/web/deployment.yaml"}
	if len(sources) != 1 || sources[object.IDOf(u)] != want[object.IDOf(u)] {
		t.Errorf("sources = %v, want %v", sources, want)
	}
}

func TestSubstituteReportsEveryFailure(t *testing.T) {
	a := parseObject(t, configMap("", "  env: ${A\n"))
	b := parseObject(t, strings.Replace(configMap("", "  env: ${B\n"), "name: app", "name: other", 1))
	err := Substitute([]*unstructured.Unstructured{a, b}, map[string]string{"X": "1"}, nil, false)
	wantErr(t, err, "ConfigMap/web/app in unknown file", "ConfigMap/web/other in unknown file")
}
