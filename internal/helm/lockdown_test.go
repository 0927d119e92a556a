package helm

import (
	"errors"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
)

// helm-controller's lockdown: a chart in another namespace is refused
// with helm-controller's own message, naming the HelmChart the release
// would make there (spec.chart) or the object spec.chartRef names; a
// release without spec.serviceAccountName is installed as the default
// account of its namespace; its own account wins.
func TestHelmLockdown(t *testing.T) {
	locked := Lockdown{DefaultServiceAccount: "default", AccountAt: "kustomization.yaml:24", NoCrossNamespaceRefs: true, CrossAt: "kustomization.yaml:10"}
	chart := func(ns string) *Release {
		return &Release{Name: "web", Namespace: "team-a", Chart: &ChartSpec{Chart: "web", SourceRef: Reference{Kind: "HelmRepository", Name: "charts", Namespace: ns}}}
	}
	chartRef := &Release{Name: "web", Namespace: "team-a", ChartRef: &Reference{Kind: "OCIRepository", Name: "web", Namespace: "flux-system"}}
	tests := []struct {
		name     string
		lockdown Lockdown
		rel      *Release
		account  string
		note     string
		denied   string
	}{
		{name: "no lockdown", rel: chart("flux-system")},
		{name: "same namespace, default account", lockdown: locked, rel: chart("team-a"), account: "default",
			note: "HelmRelease team-a/web: installed as system:serviceaccount:team-a:default, helm-controller's --default-service-account=default (kustomization.yaml:24), as it has no spec.serviceAccountName"},
		{name: "its own account wins", lockdown: locked, rel: func() *Release { r := chart("team-a"); r.ServiceAccountName = "deployer"; return r }(), account: "deployer"},
		{name: "spec.chart in another namespace", lockdown: locked, rel: chart("flux-system"),
			denied: "spec.chart.spec.sourceRef: cross-namespace references are not allowed: cannot access HelmChart flux-system/team-a-web (helm-controller's --no-cross-namespace-refs=true, kustomization.yaml:10)"},
		{name: "spec.chartRef in another namespace", lockdown: locked, rel: chartRef,
			denied: "spec.chartRef: cross-namespace references are not allowed: cannot access OCIRepository flux-system/web"},
		{name: "cross-namespace allowed", lockdown: Lockdown{DefaultServiceAccount: "default", AccountAt: "given to this run"}, rel: chartRef, account: "default",
			note: "HelmRelease team-a/web: installed as system:serviceaccount:team-a:default, helm-controller's --default-service-account=default (given to this run), as it has no spec.serviceAccountName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel := *tt.rel
			notes, err := tt.lockdown.lockDown(&rel)
			if tt.denied != "" {
				var denied *config.AccessDeniedError
				if !errors.As(err, &denied) || !strings.Contains(err.Error(), tt.denied) {
					t.Fatalf("error %v, want it denied saying %q", err, tt.denied)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rel.ServiceAccountName != tt.account {
				t.Errorf("installed as %q, want %q", rel.ServiceAccountName, tt.account)
			}
			if got := strings.Join(notes, "\n"); got != tt.note {
				t.Errorf("notes %q, want %q", got, tt.note)
			}
		})
	}
}

// A release naming helm-controller's own account in Flux's namespace
// (as the lockdown has platform HelmReleases do) is installed as the
// unit, which stands in for the controller; elsewhere, or another
// account, it is impersonated.
func TestHelmControllerOwnAccount(t *testing.T) {
	for _, tc := range []struct {
		ns, account, want string
		note              bool
	}{
		{ns: "flux-system", account: "helm-controller", want: "", note: true},
		{ns: "team-a", account: "helm-controller", want: "helm-controller"},
		{ns: "flux-system", account: "deployer", want: "deployer"},
	} {
		rel := &Release{Name: "web", Namespace: tc.ns, ServiceAccountName: tc.account}
		note := ownAccount(rel, "flux-system")
		if rel.ServiceAccountName != tc.want || (note != "") != tc.note {
			t.Errorf("%s/%s: installed as %q, note %q", tc.ns, tc.account, rel.ServiceAccountName, note)
		}
	}
	if note := ownAccount(&Release{Name: "web", Namespace: "flux-system", ServiceAccountName: "helm-controller"}, "flux-system"); note != "HelmRelease flux-system/web: installed as the unit: helm-controller is helm-controller's own account in namespace flux-system, which this run stands in for" {
		t.Errorf("note %q", note)
	}
}
