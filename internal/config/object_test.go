package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	sigsyaml "sigs.k8s.io/yaml"
)

// An object a build emitted reads, as it is, to what its YAML reads to:
// units, sources, generators, values and notifications, and the same
// problems; only the text kept as written differs (JSON for YAML).
func TestReadObjectsAsTheyAre(t *testing.T) {
	tests := []struct {
		name string
		yaml string
	}{
		{name: "Kustomization", yaml: string(ks("apps", "web", "./web", "  dependsOn:\n  - name: infra\n  postBuild:\n    substitute:\n      REPLICAS: \"3\"\n      ENABLED: \"true\"\n  timeout: 5m\n  wait: true").YAML)},
		{name: "HelmRepository", yaml: "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: flux-system\nspec:\n  interval: 1h\n  type: oci\n  url: oci://ghcr.io/acme/charts\n"},
		{name: "OCIRepository", yaml: "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: app\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: oci://ghcr.io/acme/app\n  ref:\n    semver: \">=1.0.0\"\n"},
		{name: "ConfigMap with numbers and booleans", yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: flux-system\ndata:\n  CLUSTER: home\n  REPLICAS: \"2\"\n"},
		{name: "Secret", yaml: "apiVersion: v1\nkind: Secret\nmetadata:\n  name: settings\n  namespace: flux-system\ndata:\n  TOKEN: dG9rZW4=\nstringData:\n  USER: bob\n"},
		{name: "Alert", yaml: "apiVersion: notification.toolkit.fluxcd.io/v1beta3\nkind: Alert\nmetadata:\n  name: on-call\n  namespace: apps\nspec:\n  providerRef: {name: slack}\n  eventSources:\n  - kind: Kustomization\n    name: '*'\n"},
		{name: "a field of the wrong type", yaml: string(ks("apps", "web", "./web", "  wait: 3").YAML)},
		{name: "a field no version has", yaml: string(ks("apps", "web", "./web", "  notAField: true").YAML)},
	}
	ignore := cmpopts.IgnoreFields(Unit{}, "Document")
	ignoreRaw := cmpopts.IgnoreFields(Notification{}, "Raw")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj map[string]any
			if err := sigsyaml.Unmarshal([]byte(tt.yaml), &obj); err != nil {
				t.Fatal(err)
			}
			want, wantErr := ReadObjects([]Object{{File: "apps/x.yaml", Line: 4, YAML: []byte(tt.yaml)}})
			got, gotErr := ReadObjects([]Object{{File: "apps/x.yaml", Line: 4, Object: obj}})
			if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
				t.Fatalf("error %v, want %v", gotErr, wantErr)
			}
			if diff := cmp.Diff(want, got, ignore, ignoreRaw, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("read as it is (-from YAML +as it is):\n%s", diff)
			}
			if got == nil {
				return
			}
			for _, u := range got.Units {
				if len(u.Document) == 0 {
					t.Errorf("unit %s keeps no document", u.Ref)
				}
			}
		})
	}
}
