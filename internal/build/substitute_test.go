package build

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	t.Parallel()
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
			t.Parallel()
			u := parseObject(t, tc.in)
			sources := map[object.ID]string{object.IDOf(u): "apps/web/configmap.yaml"}
			v := tc.vars
			if v == nil {
				v = vars
			}
			err := Substitute([]*unstructured.Unstructured{u}, Variables{Values: v, Always: tc.always}, sources, nil)
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
	t.Parallel()
	u := parseObject(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-${ENV}\nspec:\n  replicas: ${REPLICAS}\n")
	sources := map[object.ID]string{object.IDOf(u): "apps/web/deployment.yaml"}
	if err := Substitute([]*unstructured.Unstructured{u}, Variables{Values: map[string]string{"ENV": "prod", "REPLICAS": "3"}}, sources, nil); err != nil {
		t.Fatal(err)
	}
	if replicas, ok, err := unstructured.NestedInt64(u.Object, "spec", "replicas"); !ok || err != nil || replicas != 3 {
		t.Errorf("replicas = %v (%v, %v), want int64 3", replicas, ok, err)
	}
	want := map[object.ID]string{{Group: "apps", Kind: "Deployment", Name: "web-prod"}: "apps/web/deployment.yaml"}
	if diff := cmp.Diff(want, sources); diff != "" {
		t.Errorf("sources mismatch (-want +got):\n%s", diff)
	}
}

func TestSubstituteReportsEveryFailure(t *testing.T) {
	t.Parallel()
	a := parseObject(t, configMap("", "  env: ${A\n"))
	b := parseObject(t, strings.Replace(configMap("", "  env: ${B\n"), "name: app", "name: other", 1))
	err := Substitute([]*unstructured.Unstructured{a, b}, Variables{Values: map[string]string{"X": "1"}}, nil, nil)
	wantErr(t, err, "ConfigMap/web/app in unknown file", "ConfigMap/web/other in unknown file")
}

// A field whose text refers to a secret variable is recorded, under its
// name once substituted, whatever the value's length or the form of the
// reference; public variables, escaped references and other fields are
// not.
func TestSubstituteRecordsSecretFields(t *testing.T) {
	t.Parallel()
	vars := Variables{
		Values: map[string]string{"TOKEN": "s3cr3t", "PIN": "7", "PORT": "543", "ENV": "prod", "SECRET_KEY": "k"},
		Secret: []string{"TOKEN", "PIN", "PORT", "SECRET_KEY"},
	}
	for _, tc := range []struct {
		name   string
		in     string
		fields []string // FieldPath.String() of each recorded field
		keys   []string
	}{
		{name: "data value", in: configMap("", "  token: ${TOKEN}\n  env: ${ENV}\n  plain: postgres\n"), fields: []string{"data.token"}},
		{name: "1-character value", in: configMap("", "  pin: ${PIN}\n"), fields: []string{"data.pin"}},
		{name: "3-character value, as a number", in: "apiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  ports:\n  - port: ${PORT}\n  - port: 80\n", fields: []string{"spec.ports[0].port"}},
		{name: "in a URL", in: configMap("", "  url: https://svc.example/cb?token=${TOKEN}&v=1\n"), fields: []string{"data.url"}},
		{name: "assign default", in: configMap("", "  token: ${TOKEN:=none}\n  region: ${REGION:=eu}\n"), fields: []string{"data.token"}},
		{name: "use default", in: configMap("", "  token: ${TOKEN:-none}\n"), fields: []string{"data.token"}},
		{name: "escaped is literal text", in: configMap("", "  literal: $${TOKEN}\n  bare: $TOKEN\n"), fields: nil},
		{name: "annotation", in: configMap("  annotations:\n    example.com/token: ${TOKEN}\n", "  env: ${ENV}\n"), fields: []string{`metadata.annotations["example.com/token"]`}},
		{name: "label", in: configMap("  labels:\n    token: x-${PIN}\n", ""), fields: []string{"metadata.labels.token"}},
		{
			name:   "env value of a container",
			in:     "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        env:\n        - name: ENV\n          value: ${ENV}\n        - name: DB_PASSWORD\n          value: ${TOKEN}\n",
			fields: []string{"spec.template.spec.containers[0].env[1].value"},
		},
		{name: "map key, by its name once substituted", in: configMap("", "  key-${PIN}: ${ENV}\n"), keys: []string{"data.key-7"}},
		{name: "name", in: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-${PIN}\n", fields: []string{"metadata.name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := parseObject(t, tc.in)
			secret := map[object.ID]*object.SecretFields{}
			if err := Substitute([]*unstructured.Unstructured{u}, vars, nil, secret); err != nil {
				t.Fatal(err)
			}
			got := secret[object.IDOf(u)]
			if len(secret) > 1 || (got == nil) != (tc.fields == nil && tc.keys == nil) {
				t.Fatalf("recorded %v for %v", secret, object.IDOf(u))
			}
			if got == nil {
				return
			}
			if diff := cmp.Diff(tc.fields, pathStrings(got.Fields)); diff != "" {
				t.Errorf("fields mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.keys, pathStrings(got.Keys)); diff != "" {
				t.Errorf("keys mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// What decryption recorded moves with the object when substitution
// renames it; an object that opts out records nothing.
func TestSubstituteRekeysSecretFields(t *testing.T) {
	t.Parallel()
	u := parseObject(t, configMap("", "  token: ${TOKEN}\n"))
	u.SetName("app-${ENV}")
	off := parseObject(t, configMap("  annotations:\n    kustomize-deploy.dev/substitute: disabled\n", "  token: ${TOKEN}\n"))
	off.SetName("off")
	old := object.IDOf(u)
	secret := map[object.ID]*object.SecretFields{old: {Fields: []object.FieldPath{{"data", "sealed"}}}}
	vars := Variables{Values: map[string]string{"TOKEN": "s3cr3t", "ENV": "prod"}, Secret: []string{"TOKEN"}}
	if err := Substitute([]*unstructured.Unstructured{u, off}, vars, nil, secret); err != nil {
		t.Fatal(err)
	}
	want := map[object.ID]*object.SecretFields{object.IDOf(u): {Fields: []object.FieldPath{{"data", "sealed"}, {"data", "token"}}}}
	if diff := cmp.Diff(want, secret); diff != "" {
		t.Errorf("secret fields mismatch (-want +got):\n%s", diff)
	}
}

func pathStrings(ps []object.FieldPath) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}
