package units

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
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
	empty := repo(t, map[string]string{"clusters/prod/source.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system}\n"})
	seed := repo(t, map[string]string{"clusters/prod/app.yaml": strings.Replace(kustomization("app", "./app"), "kustomize.toolkit.fluxcd.io/v1", "kustomize.fluxcd.io/v1beta1", 1), "app/settings.yaml": configMap})
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
		{name: "no unit to run", spec: Spec{Path: filepath.Join(empty, "clusters/prod"), Root: empty, Unit: def}, config: true, mentions: "configuration clusters/prod holds no Flux Kustomization to run: refused, since applying it would garbage-collect every unit deployed from it (1 YAML file(s) read"},
		{name: "a Kustomization of a version Flux's prototype API never had", spec: Spec{Path: filepath.Join(seed, "clusters/prod"), Root: seed, Unit: def}, config: true, mentions: "clusters/prod/app.yaml:1: Kustomization flux-system/app: apiVersion: \"kustomize.fluxcd.io/v1beta1\" is not read"},
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

// A problem of one Kustomization's own (a field that does not read, a
// spec.path that is no directory) opens the configuration all the same:
// that unit is refused when its turn comes, the others run.
func TestOpenRefusesOneUnit(t *testing.T) {
	broken := repo(t, map[string]string{"clusters/prod/app.yaml": kustomization("app", "./app") + "  timeout: soon\n", "app/settings.yaml": configMap})
	missing := repo(t, map[string]string{"clusters/prod/app.yaml": kustomization("app", "./missing")})
	for _, tc := range []struct {
		name, root, mentions string
	}{
		{"a Kustomization that does not read", broken, `clusters/prod/app.yaml:9: Kustomization flux-system/app: spec.timeout: "soon" is not a duration`},
		{"a unit whose path is no directory", missing, "unit app (clusters/prod/app.yaml:1): spec.path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := Open(t.Context(), Spec{Path: filepath.Join(tc.root, "clusters/prod"), Root: tc.root, Unit: spec.Default(), Cluster: offline})
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			var re *RefusedError
			if len(run.Units()) != 1 || !errors.As(run.Units()[0].Err, &re) || !strings.Contains(re.Error(), tc.mentions) {
				t.Fatalf("units %+v: want app refused, saying %q", run.Units(), tc.mentions)
			}
		})
	}
}

// Without a cluster, an offline diff finds the units that left the
// configuration by comparing it with the base revision: each is listed
// with the objects it renders there, and the budget applies as it does
// to inventories.
func TestDiffOfflineListsUnitsThatLeft(t *testing.T) {
	files := map[string]string{
		"clusters/prod/apps.yaml":  kustomization("apps", "./apps"),
		"apps/settings.yaml":       configMap,
		"clusters/prod/cache.yaml": kustomization("cache", "./cache"),
		"cache/settings.yaml":      strings.Replace(configMap, "settings", "cache", 1),
		"clusters/prod/db.yaml":    strings.Replace(kustomization("db", "./db"), "prune: true", "prune: false", 1),
		"db/settings.yaml":         strings.Replace(configMap, "settings", "db", 1),
	}
	base := repo(t, files)
	head := repo(t, map[string]string{"clusters/prod/apps.yaml": files["clusters/prod/apps.yaml"], "apps/settings.yaml": configMap})
	at := func(_ context.Context, rev string, dir paths.Dir) (*paths.Dir, error) {
		if rev != "b4se" {
			t.Errorf("checked out %q", rev)
		}
		d, err := paths.Resolve(filepath.Join(base, dir.Rel), base)
		return &d, err
	}
	for _, tc := range []struct {
		name       string
		maxCollect int
		want       map[string]result.Reason
	}{
		{"within the budget", 2, map[string]result.Reason{"apps": result.ReasonOfflineDiffSucceed, "cache": result.ReasonOfflineDiffSucceed, "db": result.ReasonOfflineDiffSucceed}},
		{"over it", 1, map[string]result.Reason{"apps": result.ReasonOfflineDiffSucceed, "cache": result.ReasonPruneFailed, "db": result.ReasonPruneFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := spec.Default()
			u.MaxCollect = tc.maxCollect
			run, err := Open(t.Context(), Spec{Path: filepath.Join(head, "clusters/prod"), Root: head, Unit: u, Cluster: offline, Base: "b4se", At: at})
			if err != nil {
				t.Fatal(err)
			}
			set := run.DiffOffline(t.Context())
			got := map[string]result.Reason{}
			for _, r := range set.Units {
				got[r.Unit] = r.Reason
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("reasons mismatch (-want +got):\n%s", diff)
			}
			if set.Ready != (tc.maxCollect >= 2) {
				t.Errorf("ready %v", set.Ready)
			}
			cache, db := set.Units[1], set.Units[2]
			if tc.maxCollect < 2 {
				if !strings.Contains(cache.Message, "refusing to garbage-collect 2 unit(s) that left the configuration (cache, db): more than the 1 unit(s) allowed") {
					t.Errorf("cache: %s", cache.Message)
				}
				return
			}
			want := []result.Entry{{Object: object.ID{Kind: "ConfigMap", Name: "cache"}, Version: "v1", Source: "cache/settings.yaml", Stage: result.StagePrune, Action: result.Deleted, Reason: "its unit left the configuration: the apply garbage-collects it"}}
			if diff := cmp.Diff(want, cache.Entries); diff != "" {
				t.Errorf("cache's entries mismatch (-want +got):\n%s", diff)
			}
			for _, s := range []string{"not in the configuration since b4se; if it was deployed from it: left the configuration (deletionPolicy Delete): the apply garbage-collects it, deleting its 1 object(s)"} {
				if !strings.Contains(cache.Message, s) {
					t.Errorf("cache: %q lacks %q", cache.Message, s)
				}
			}
			if len(cache.Notes) == 0 || !strings.Contains(cache.Notes[0], "without cluster access, its inventory is not read") {
				t.Errorf("cache's notes: %q", cache.Notes)
			}
			// prune: false is Flux's MirrorPrune of nothing: Orphan.
			if db.Counts.Skipped != 1 || !strings.Contains(db.Message, "(deletionPolicy Orphan): the apply removes its inventory; its objects stay") {
				t.Errorf("db: %+v", db)
			}
		})
	}
}
