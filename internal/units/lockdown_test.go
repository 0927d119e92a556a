package units

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source"
)

// Flux's lockdown, as the configuration declares it or the run is given
// it, decides as whom each unit applies, which sourceRefs it may follow,
// whether its build may fetch remote bases, and what its HelmReleases'
// rendering is told: kustomize-controller's and helm-controller's rules.
func TestLockdownRules(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "tenants/team-a"), 0o755); err != nil {
		t.Fatal(err)
	}
	declared := config.Lockdown{
		Kustomize: config.ControllerFlags{
			DefaultServiceAccount: config.Setting{Value: "default", At: "clusters/prod/flux-system/kustomization.yaml:24 (Deployment flux-system/kustomize-controller args)"},
			NoCrossNamespaceRefs:  config.Setting{Value: "true", At: "clusters/prod/flux-system/kustomization.yaml:10 (Deployment flux-system/kustomize-controller args)"},
			NoRemoteBases:         config.Setting{Value: "true", At: "clusters/prod/flux-system/kustomization.yaml:17 (Deployment flux-system/kustomize-controller args)"},
			From:                  []string{"x"},
		},
		Helm: config.ControllerFlags{
			DefaultServiceAccount: config.Setting{Value: "default", At: "clusters/prod/flux-system/kustomization.yaml:24 (Deployment flux-system/helm-controller args)"},
			NoCrossNamespaceRefs:  config.Setting{Value: "true", At: "clusters/prod/flux-system/kustomization.yaml:10 (Deployment flux-system/helm-controller args)"},
			From:                  []string{"x"},
		},
	}
	sync := &config.Unit{Name: "flux-system", Ref: config.Ref{Namespace: "flux-system", Name: "flux-system"}, File: "clusters/prod/flux-system/gotk-sync.yaml", Line: 10,
		Source: config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"}, Path: "tenants/team-a", Sync: true}
	tenant := func(edit func(u *config.Unit)) *config.Unit {
		u := &config.Unit{Name: "team-a", Ref: config.Ref{Namespace: "team-a", Name: "team-a"}, File: "tenants/team-a.yaml", Line: 3,
			Source: config.SourceRef{Kind: "GitRepository", Namespace: "team-a", Name: "team-a"}, Path: "tenants/team-a"}
		if edit != nil {
			edit(u)
		}
		return u
	}
	yes, no, named := true, false, "tenant"
	const fleet = "https://github.com/example/fleet"
	tests := []struct {
		name     string
		lockdown config.Lockdown
		override LockdownOverride
		unit     *config.Unit
		// account is the account the unit applies as, "" for the run's
		// identity; note is a part of one of its notes.
		account, note string
		// denied is a part of its AccessDenied error ("" for none).
		denied string
		// remote is a part of why its build refuses remote bases.
		remote string
		// charts is helm-controller's lockdown its charts render with.
		charts helm.Lockdown
		// runNote is a part of the run's notes.
		runNote string
	}{
		{name: "no lockdown: as the run", unit: tenant(nil)},
		{name: "a tenant without serviceAccountName: the default account of its namespace", lockdown: declared, unit: tenant(nil),
			account: "default", note: "applies as team-a/default (system:serviceaccount:team-a:default): it has no spec.serviceAccountName, and Flux's multi-tenancy lockdown gives kustomize-controller --default-service-account=default (clusters/prod/flux-system/kustomization.yaml:24",
			remote:  "Flux's multi-tenancy lockdown gives kustomize-controller --no-remote-bases=true (clusters/prod/flux-system/kustomization.yaml:17",
			charts:  helm.Lockdown{DefaultServiceAccount: "default", AccountAt: declared.Helm.DefaultServiceAccount.At, NoCrossNamespaceRefs: true, CrossAt: declared.Helm.NoCrossNamespaceRefs.At},
			runNote: "Flux's multi-tenancy lockdown of kustomize-controller takes effect: --default-service-account=default (clusters/prod/flux-system/kustomization.yaml:24"},
		{name: "its own serviceAccountName wins", lockdown: declared, unit: tenant(func(u *config.Unit) { u.ServiceAccountName = "team-a-deployer" }), account: "team-a-deployer"},
		{name: "in Flux's namespace too, kustomize-controller's own account as the run", lockdown: declared,
			unit: tenant(func(u *config.Unit) {
				u.Ref, u.Source.Namespace, u.ServiceAccountName = config.Ref{Namespace: "flux-system", Name: "infra"}, "flux-system", "kustomize-controller"
			}),
			note: "kustomize-controller's own account in namespace flux-system: the unit applies as this run's identity"},
		{name: "in Flux's namespace without one: its default account", lockdown: declared,
			unit: tenant(func(u *config.Unit) {
				u.Ref, u.Source.Namespace = config.Ref{Namespace: "flux-system", Name: "infra"}, "flux-system"
			}),
			account: "default", note: "applies as flux-system/default"},
		{name: "a sourceRef in another namespace is refused", lockdown: declared,
			unit:   tenant(func(u *config.Unit) { u.Source.Namespace = "flux-system" }),
			denied: "Kustomization team-a/team-a (tenants/team-a.yaml:3): spec.sourceRef: can't access 'GitRepository/flux-system/team-a', cross-namespace references have been blocked (kustomize-controller's --no-cross-namespace-refs=true, clusters/prod/flux-system/kustomization.yaml:10"},
		{name: "the run's settings win, and say so", lockdown: declared, override: LockdownOverride{DefaultServiceAccount: &named, NoCrossNamespaceRefs: &no},
			unit: tenant(func(u *config.Unit) { u.Source.Namespace = "flux-system" }), account: "tenant",
			note:    "kustomize-controller --default-service-account=tenant (given to this run)",
			remote:  "--no-remote-bases=true",
			charts:  helm.Lockdown{DefaultServiceAccount: "tenant", AccountAt: "given to this run", CrossAt: "given to this run"},
			runNote: "kustomize-controller's lockdown as given to this run takes effect over the configuration's --default-service-account=default (clusters/prod/flux-system/kustomization.yaml:24 (Deployment flux-system/kustomize-controller args)), --no-cross-namespace-refs=true"},
		{name: "the run's lockdown without the configuration's", override: LockdownOverride{NoCrossNamespaceRefs: &yes},
			unit:   tenant(func(u *config.Unit) { u.Source.Namespace = "flux-system" }),
			denied: "(kustomize-controller's --no-cross-namespace-refs=true, given to this run)",
			charts: helm.Lockdown{NoCrossNamespaceRefs: true, CrossAt: "given to this run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := pipeline.DefaultOptions()
			base.Build.AllowRemoteBases = true
			base.Charts = &helm.Options{}
			c := Config{
				Set: &config.Set{Units: []*config.Unit{sync, tt.unit}, Lockdown: tt.lockdown, Sources: []*config.Source{
					{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: "flux-system"}, URL: fleet},
					{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: "team-a"}, URL: fleet},
					{Kind: "GitRepository", Ref: config.Ref{Namespace: "team-a", Name: "team-a"}, URL: fleet},
				}}, Root: root, ID: "fleet//clusters/prod", Identity: source.Identity{Remote: fleet},
				Base: base, Lockdown: tt.override,
				Cluster: Clusters(func(string) (*kube.Clients, error) { return nil, nil }),
			}
			list, err := c.Units(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			u := list[1]
			if tt.denied != "" {
				var denied *config.AccessDeniedError
				if !errors.As(u.Err, &denied) || !strings.Contains(u.Err.Error(), tt.denied) {
					t.Fatalf("error %v, want it denied saying %q", u.Err, tt.denied)
				}
				if res := unbuildable(u, result.ModeApply); res.Reason != result.ReasonAccessDenied {
					t.Errorf("reason %s, want AccessDenied", res.Reason)
				}
				return
			}
			if u.Err != nil {
				t.Fatal(u.Err)
			}
			o := u.Options
			if o.ServiceAccount != tt.account {
				t.Errorf("applies as %q, want %q", o.ServiceAccount, tt.account)
			}
			if o.ServiceAccount != "" && o.ServiceAccountNamespace != tt.unit.Ref.Namespace {
				t.Errorf("account of namespace %q, want the unit's", o.ServiceAccountNamespace)
			}
			if notes := strings.Join(o.Notes, "\n"); tt.note != "" && !strings.Contains(notes, tt.note) {
				t.Errorf("notes lack %q:\n%s", tt.note, notes)
			}
			if tt.runNote == "" && !(tt.lockdown.IsZero() && tt.override == (LockdownOverride{})) {
				return // as whom it applies is what the case shows
			}
			if tt.remote == "" && o.Build.NoRemoteBases != "" || !strings.Contains(o.Build.NoRemoteBases, tt.remote) {
				t.Errorf("remote bases refused because %q, want %q", o.Build.NoRemoteBases, tt.remote)
			}
			if o.Charts == nil || o.Charts.Lockdown != tt.charts {
				t.Errorf("charts' lockdown %+v, want %+v", o.Charts, tt.charts)
			}
			if notes := strings.Join(c.lockdownNotes(), "\n"); !strings.Contains(notes, tt.runNote) || tt.runNote == "" && notes != "" {
				t.Errorf("run notes lack %q:\n%s", tt.runNote, notes)
			}
		})
	}
}
