package units

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

// repo writes files (path → content) into a new repository root.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func kustomization(name, path string, deps ...string) string {
	s := "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
		"spec:\n  interval: 10m\n  prune: true\n  path: " + path + "\n  sourceRef: {kind: GitRepository, name: flux-system}\n"
	if len(deps) > 0 {
		s += "  dependsOn:\n"
		for _, d := range deps {
			s += "  - name: " + d + "\n"
		}
	}
	return s
}

const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {size: small}\n"

func offline(string) (*kube.Clients, error) { return nil, nil }

// Open reads a configuration into units in configuration order, and
// without a cluster an offline diff of it renders every unit.
func TestOpenMapsAConfigurationAndDiffsItOffline(t *testing.T) {
	root := repo(t, map[string]string{
		"clusters/prod/apps.yaml":  kustomization("apps", "./apps", "infra"),
		"clusters/prod/infra.yaml": kustomization("infra", "./infra"),
		"apps/settings.yaml":       configMap,
		"infra/settings.yaml":      strings.Replace(configMap, "small", "large", 1),
	})
	run, err := Open(t.Context(), Spec{Path: filepath.Join(root, "clusters/prod"), Root: root, Unit: spec.Default(), Cluster: offline})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range run.Units() {
		names = append(names, u.Options.Name)
	}
	if diff := cmp.Diff([]string{"apps", "infra"}, names); diff != "" {
		t.Errorf("units mismatch (-want +got):\n%s", diff)
	}
	if run.Dir.Rel != "clusters/prod" || run.ID() != "clusters/prod" {
		t.Errorf("dir %+v, id %q", run.Dir, run.ID())
	}
	if len(run.Notes) == 0 {
		t.Error("no notes about sourceRef and interval, which are read but not acted on")
	}

	set := run.DiffOffline(t.Context())
	if !set.Ready || len(set.Units) != 2 {
		t.Fatalf("offline diff: %+v", set)
	}
	for _, r := range set.Units {
		if r.Reason != result.ReasonOfflineDiffSucceed || r.Counts.Created != 1 {
			t.Errorf("unit %s: %s %s, counts %+v (no base: everything is new)", r.Unit, r.Reason, r.Message, r.Counts)
		}
	}
}

// Each kind of problem comes back as what it is, so that each front end
// names its own flag or input for it.
func TestOpenSaysWhichKindOfProblem(t *testing.T) {
	good := repo(t, map[string]string{"clusters/prod/app.yaml": kustomization("app", "./app"), "app/settings.yaml": configMap})
	broken := repo(t, map[string]string{"clusters/prod/app.yaml": kustomization("app", "./app") + "  timeout: soon\n", "app/settings.yaml": configMap})
	missing := repo(t, map[string]string{"clusters/prod/app.yaml": kustomization("app", "./missing")})
	empty := repo(t, map[string]string{"clusters/prod/source.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system}\n"})
	seed := repo(t, map[string]string{"clusters/prod/app.yaml": strings.Replace(kustomization("app", "./app"), "kustomize.toolkit.fluxcd.io/v1", "kustomize.fluxcd.io/v1alpha1", 1), "app/settings.yaml": configMap})
	def := spec.Default()
	badOption := spec.Default()
	badOption.Validation = "strict"

	for _, tc := range []struct {
		name     string
		spec     Spec
		path     bool   // a *ConfigError about the path
		config   bool   // a *ConfigError about the files
		option   string // a spec.OptionError about this option
		mentions string
	}{
		{name: "no such configuration", spec: Spec{Path: filepath.Join(good, "clusters/staging"), Root: good, Unit: def}, path: true, mentions: "clusters/staging"},
		{name: "a Kustomization that does not read", spec: Spec{Path: filepath.Join(broken, "clusters/prod"), Root: broken, Unit: def}, config: true, mentions: "spec.timeout"},
		{name: "a unit whose path is no directory", spec: Spec{Path: filepath.Join(missing, "clusters/prod"), Root: missing, Unit: def}, config: true, mentions: "unit app (clusters/prod/app.yaml:1): spec.path"},
		{name: "no unit to run", spec: Spec{Path: filepath.Join(empty, "clusters/prod"), Root: empty, Unit: def}, config: true, mentions: "configuration clusters/prod holds no Flux Kustomization to run: refused, since applying it would garbage-collect every unit deployed from it (1 YAML file(s) read"},
		{name: "a Kustomization of Flux's prototype API", spec: Spec{Path: filepath.Join(seed, "clusters/prod"), Root: seed, Unit: def}, config: true, mentions: "clusters/prod/app.yaml:1: Kustomization flux-system/app: apiVersion: \"kustomize.fluxcd.io/v1alpha1\" is not read"},
		{name: "a unit not in the configuration", spec: Spec{Path: filepath.Join(good, "clusters/prod"), Root: good, Unit: def, Only: []string{"db"}}, config: true, mentions: "unit db is not in the configuration"},
		{name: "a bad value for every unit", spec: Spec{Path: filepath.Join(good, "clusters/prod"), Root: good, Unit: badOption}, option: "validation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Cluster = offline
			_, err := Open(t.Context(), tc.spec)
			if err == nil {
				t.Fatal("no error")
			}
			var ce *ConfigError
			isConfig := errors.As(err, &ce)
			switch {
			case tc.path && !(isConfig && ce.Path), tc.config && !(isConfig && !ce.Path):
				t.Errorf("error %T %v: want a *ConfigError (path: %v)", err, err, tc.path)
			case tc.option != "":
				oes := spec.OptionErrors(err)
				if isConfig || len(oes) != 1 || string(oes[0].Option) != tc.option {
					t.Errorf("error %v: want one about option %s", err, tc.option)
				}
			}
			if !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("error %q does not mention %q", err, tc.mentions)
			}
		})
	}
}
