package units

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// mapped is what Config.Units makes of one Kustomization, in the terms
// a reader compares: the engine options that differ from the run's base,
// and the unit's place in the run.
type mapped struct {
	Options   pipeline.Options
	DependsOn []string
	Cluster   string
}

// The Flux → engine mapping, field by field: what each Kustomization field
// becomes, how the run's own flags or inputs combine with it, and what is
// refused.
func TestConfigMapsKustomizationsOntoTheEngine(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"apps/web", "apps/db"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	web, err := paths.Resolve(filepath.Join(root, "apps/web"), root)
	if err != nil {
		t.Fatal(err)
	}
	base := pipeline.DefaultOptions()
	base.Revision, base.InventoryNamespace = "abc123", "deploys"
	base.Decryption.Keys = []string{"AGE-SECRET-KEY-RUN"}
	base.PruneBudget = prune.Budget{Max: 5}
	base.Build.AllowRemoteBases = true
	// want starts from what every unit of this run gets.
	want := func(edit func(o *pipeline.Options)) pipeline.Options {
		o := base
		o.Name, o.Dir, o.Config = "web", web, "git@example.com:acme/fleet//clusters/prod"
		o.Build = build.Options{AllowRemoteBases: true, Images: []build.Image{}}
		o.Substitute = map[string]string{}
		o.SubstitutePublic = true
		o.Decryption.Keys = []string{"AGE-SECRET-KEY-RUN"}
		o.ServiceAccountNamespace = "flux-system"
		o.RunFlux = true
		o.Timeout, o.DeletionPolicy = time.Minute, "Delete" // the Kustomization's, below
		if edit != nil {
			edit(&o)
		}
		return o
	}
	unit := func(edit func(u *config.Unit)) *config.Unit {
		u := &config.Unit{Name: "web", Ref: config.Ref{Namespace: "flux-system", Name: "web"}, File: "clusters/prod/web.yaml", Line: 3,
			Source: config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"},
			Path:   "apps/web", Prune: true, Wait: true, Timeout: time.Minute, DeletionPolicy: "Delete"}
		edit(u)
		return u
	}
	db := &config.Unit{Name: "db", Ref: config.Ref{Namespace: "flux-system", Name: "db"}, File: "clusters/prod/db.yaml", Line: 1, Path: "apps/db", Prune: true,
		Source: config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"}}

	for _, tc := range []struct {
		name string
		unit *config.Unit
		// run's own settings
		images     []build.Image
		substitute map[string]string
		keys       map[string][]string
		only       []string
		force      bool
		want       mapped
		wantErr    string
		// refused: the unit is refused when it runs (a *RefusedError
		// saying this), the others mapped.
		refused string
	}{
		{
			name: "the fields Flux and the engine share",
			unit: unit(func(u *config.Unit) {
				u.TargetNamespace, u.NamePrefix, u.NameSuffix = "shop", "pre-", "-suf"
				u.Labels, u.Annotations = map[string]string{"team": "web"}, map[string]string{"owner": "ana"}
				u.Components, u.IgnoreMissingComponents = []string{"../components/tls"}, true
				u.Patches = []config.Patch{{Patch: "- op: remove\n  path: /spec/replicas", Target: &config.Selector{Kind: "Deployment", LabelSelector: "app=web"}}}
				u.Prune, u.Wait, u.Timeout, u.Suspend = false, false, 90*time.Second, true
				u.ServiceAccountName, u.DeletionPolicy = "deployer", "Orphan"
			}),
			want: mapped{Options: want(func(o *pipeline.Options) {
				o.Build.TargetNamespace, o.Build.NamePrefix, o.Build.NameSuffix = "shop", "pre-", "-suf"
				o.Build.Labels, o.Build.Annotations = map[string]string{"team": "web"}, map[string]string{"owner": "ana"}
				o.Build.Components, o.Build.IgnoreMissingComponents = []string{"../components/tls"}, true
				o.Build.Patches = []build.Patch{{Patch: "- op: remove\n  path: /spec/replicas", Target: &build.Target{Kind: "Deployment", LabelSelector: "app=web"}}}
				o.Prune, o.Wait, o.Timeout, o.Suspend = false, false, 90*time.Second, true
				o.ServiceAccount, o.DeletionPolicy = "deployer", "Orphan"
			})},
		},
		{
			name: "the run's image overrides replace the unit's of the same name",
			unit: unit(func(u *config.Unit) {
				u.Images = []config.Image{{Name: "web", NewTag: "1.0"}, {Name: "sidecar", NewName: "proxy"}}
			}),
			images: []build.Image{{Name: "web", NewTag: "2.0"}},
			want: mapped{Options: want(func(o *pipeline.Options) {
				o.Build.Images = []build.Image{{Name: "sidecar", NewName: "proxy"}, {Name: "web", NewTag: "2.0"}}
			})},
		},
		{
			name: "the run's substitutions win and may be secret",
			unit: unit(func(u *config.Unit) {
				u.Substitute = map[string]string{"ENV": "prod", "REGION": "eu"}
				u.SubstituteStrategy = "Always"
			}),
			substitute: map[string]string{"ENV": "staging"},
			want: mapped{Options: want(func(o *pipeline.Options) {
				o.Substitute = map[string]string{"ENV": "staging", "REGION": "eu"}
				o.SubstitutePublic, o.SubstituteAlways = false, true
			})},
		},
		{
			name: "the unit's own substitutions are Git's: public",
			unit: unit(func(u *config.Unit) { u.Substitute = map[string]string{"ENV": "prod"} }),
			want: mapped{Options: want(func(o *pipeline.Options) { o.Substitute = map[string]string{"ENV": "prod"} })},
		},
		{
			name: "the decryption Secret's keys join the run's",
			unit: unit(func(u *config.Unit) { u.Decryption = &config.Decryption{SecretName: "sops-age"} }),
			keys: map[string][]string{"sops-age": {"AGE-SECRET-KEY-UNIT"}, "other": {"AGE-SECRET-KEY-OTHER"}},
			want: mapped{Options: want(func(o *pipeline.Options) {
				o.Decryption.Keys = []string{"AGE-SECRET-KEY-RUN", "AGE-SECRET-KEY-UNIT"}
			})},
		},
		{
			name:  "force: the unit's or the run's",
			unit:  unit(func(u *config.Unit) {}),
			force: true,
			want:  mapped{Options: want(func(o *pipeline.Options) { o.Force = true })},
		},
		{
			name: "health checks and v1beta1's validation",
			unit: unit(func(u *config.Unit) {
				u.HealthChecks = []config.HealthCheck{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "shop"}, {APIVersion: "v1", Kind: "Namespace", Name: "shop"}}
				u.Validation = "client"
			}),
			want: mapped{Options: want(func(o *pipeline.Options) {
				o.HealthChecks = []object.ID{{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, {Kind: "Namespace", Name: "shop"}}
				o.Validation = result.ValidationClient
			})},
		},
		{
			name: "a dependency in the run waits in the run; one outside is checked in the cluster",
			unit: unit(func(u *config.Unit) {
				u.DependsOn = []config.Ref{{Namespace: "flux-system", Name: "db"}, {Namespace: "infra", Name: "cert-manager"}}
			}),
			want: mapped{Options: want(func(o *pipeline.Options) { o.DependsOn = []string{"cert-manager"} }), DependsOn: []string{"db"}},
		},
		{
			name: "with --name, a dependency left out of the run is checked in the cluster",
			unit: unit(func(u *config.Unit) { u.DependsOn = []config.Ref{{Namespace: "flux-system", Name: "db"}} }),
			only: []string{"web"},
			want: mapped{Options: want(func(o *pipeline.Options) { o.DependsOn = []string{"db"} })},
		},
		{
			name: "a remote cluster",
			unit: unit(func(u *config.Unit) { u.KubeConfig = &config.KubeConfig{SecretName: "prod-eu"} }),
			want: mapped{Options: want(nil), Cluster: "prod-eu"},
		},
		{
			name: "spec.ignore's rules, as fluxcd/pkg/ssa takes them",
			unit: unit(func(u *config.Unit) {
				u.Ignore = []config.IgnoreRule{{Paths: []string{"/spec/replicas"}, Target: &config.Selector{Group: "apps", Kind: "Deployment", Name: "web-.*"}}, {Paths: []string{"/metadata/annotations/x"}}}
			}),
			want: mapped{Options: want(func(o *pipeline.Options) {
				o.Ignore = []jsondiff.IgnoreRule{{Paths: []string{"/spec/replicas"}, Selector: &jsondiff.Selector{Group: "apps", Kind: "Deployment", Name: "web-.*"}}, {Paths: []string{"/metadata/annotations/x"}}}
			})},
		},
		{
			name:    "spec.buildMetadata is refused",
			unit:    unit(func(u *config.Unit) { u.BuildMetadata = []string{"originAnnotations"} }),
			refused: "spec.buildMetadata is not supported yet",
		},
		{
			name:    "a path outside the repository",
			unit:    unit(func(u *config.Unit) { u.Path = "../elsewhere" }),
			refused: "unit web (clusters/prod/web.yaml:3): spec.path: ",
		},
		{
			name: "a health check whose apiVersion does not parse",
			unit: unit(func(u *config.Unit) {
				u.HealthChecks = []config.HealthCheck{{APIVersion: "apps/v1/beta", Kind: "Deployment", Name: "web"}}
			}),
			refused: `spec.healthChecks[0].apiVersion "apps/v1/beta"`,
		},
		{
			name: "a Kustomization with a problem of its own is refused, its dependencies kept",
			unit: unit(func(u *config.Unit) {
				u.DependsOn = []config.Ref{{Namespace: "flux-system", Name: "db"}}
				u.Refused = []*config.Error{{File: "clusters/prod/web.yaml", Line: 9, Object: "Kustomization flux-system/web", Field: "spec.prunee", Msg: "unknown field"}}
			}),
			refused: "clusters/prod/web.yaml:9: Kustomization flux-system/web: spec.prunee: unknown field",
		},
		{
			name:    "a unit --name asks for that is not in the configuration",
			unit:    unit(func(u *config.Unit) {}),
			only:    []string{"web", "cache"},
			wantErr: "unit cache is not in the configuration",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base
			b.Force = tc.force
			c := Config{
				Set: &config.Set{Units: []*config.Unit{tc.unit, db}}, Root: root, ID: "git@example.com:acme/fleet//clusters/prod",
				Base: b, Images: tc.images, Substitute: tc.substitute, DecryptionKeys: tc.keys, Only: tc.only,
				Cluster: Clusters(func(string) (*kube.Clients, error) { return nil, nil }),
			}
			list, err := c.Units(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(list) == 0 || list[0].Options.Name != "web" {
				t.Fatalf("units %+v", list)
			}
			if tc.refused != "" {
				var re *RefusedError
				if !errors.As(list[0].Err, &re) || !strings.Contains(re.Error(), tc.refused) {
					t.Fatalf("unit web: error %v, want it refused saying %q", list[0].Err, tc.refused)
				}
				if len(list) != 2 || list[1].Err != nil {
					t.Errorf("the other unit: %+v", list[1:])
				}
				if len(tc.unit.DependsOn) > 0 && !slices.Equal(list[0].DependsOn, []string{"db"}) {
					t.Errorf("dependencies of the refused unit: %v", list[0].DependsOn)
				}
				res := unbuildable(list[0], result.ModeApply)
				if res.Reason != result.ReasonBuildFailed || len(res.FileErrors) != len(tc.unit.Refused) {
					t.Errorf("its result: %s, file errors %+v", res.Reason, res.FileErrors)
				}
				return
			}
			got := mapped{Options: list[0].Options, DependsOn: list[0].DependsOn, Cluster: list[0].ClusterName}
			if where := list[0].Where; where != "clusters/prod/web.yaml:3" {
				t.Errorf("where %q", where)
			}
			opts := cmp.Options{cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(build.Options{}), cmpopts.IgnoreFields(pipeline.Options{}, "Variables", "At", "Snapshot", "Progress", "Mask", "Dependency", "Clusters")}
			if diff := cmp.Diff(tc.want, got, opts); diff != "" {
				t.Errorf("unit web mismatch (-want +got):\n%s", diff)
			}
			if got.Options.Clusters == nil {
				t.Error("no Clusters: a HelmRelease's kubeConfig would find no cluster")
			}
		})
	}
}
