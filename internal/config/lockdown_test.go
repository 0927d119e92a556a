package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every spelling of the lockdown's flags reads as the controllers' pflag
// reads it: --flag=value, --flag value for the string flag, a boolean
// alone meaning true (and taking no value but after "="), the last
// occurrence winning, "--" ending the flags; a boolean that does not
// parse is refused.
func TestLockdownFlagSpellings(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want map[string]string
		bad  []string
	}{
		{name: "flux2-multi-tenancy's", args: []string{"--events-addr=http://x/", "--watch-all-namespaces", "--no-cross-namespace-refs=true", "--no-remote-bases=true", "--default-service-account=default"},
			want: map[string]string{FlagNoCrossNamespaceRefs: "true", FlagNoRemoteBases: "true", FlagDefaultServiceAccount: "default"}},
		{name: "string flag then its value", args: []string{"--default-service-account", "tenant", "--log-level=info"},
			want: map[string]string{FlagDefaultServiceAccount: "tenant"}},
		{name: "booleans alone", args: []string{"--no-cross-namespace-refs", "--no-remote-bases"},
			want: map[string]string{FlagNoCrossNamespaceRefs: "true", FlagNoRemoteBases: "true"}},
		{name: "a boolean takes no separate value", args: []string{"--no-cross-namespace-refs", "false"},
			want: map[string]string{FlagNoCrossNamespaceRefs: "true"}},
		{name: "boolean spellings of strconv", args: []string{"--no-cross-namespace-refs=1", "--no-remote-bases=F"},
			want: map[string]string{FlagNoCrossNamespaceRefs: "true", FlagNoRemoteBases: "false"}},
		{name: "the last wins", args: []string{"--no-cross-namespace-refs=false", "--default-service-account=a", "--no-cross-namespace-refs=true", "--default-service-account=b"},
			want: map[string]string{FlagNoCrossNamespaceRefs: "true", FlagDefaultServiceAccount: "b"}},
		{name: "after -- are arguments", args: []string{"--", "--no-cross-namespace-refs=true"}, want: map[string]string{}},
		{name: "not a boolean", args: []string{"--no-remote-bases=yes"}, want: map[string]string{}, bad: []string{"--no-remote-bases=yes"}},
		{name: "other flags", args: []string{"--default-service-account-x=a", "-no-cross-namespace-refs"}, want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, bad := parseFlags(tt.args)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.bad, bad); diff != "" {
				t.Errorf("bad (-want +got):\n%s", diff)
			}
		})
	}
}

// deployment is a Flux controller's Deployment as a build emits it.
func deployment(name string, args ...string) Object {
	list := make([]any, len(args))
	for i, a := range args {
		list[i] = a
	}
	return Object{File: "clusters/prod/flux-system/gotk-components.yaml", Line: 40, Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "flux-system"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "manager", "args": list},
		}}}},
	}}
}

// The controllers' Deployments a build emits declare the lockdown: each
// controller's own flags, where each was written (the patch adding it,
// else the Deployment), kustomize-controller's alone reading
// --no-remote-bases, notification-controller's only
// --no-cross-namespace-refs; other Deployments declare nothing.
func TestLockdownFromControllerDeployments(t *testing.T) {
	kc := deployment(KustomizeController, "--watch-all-namespaces", "--no-cross-namespace-refs=true", "--no-remote-bases=true", "--default-service-account=default")
	kc.Locate = func(text string) string {
		if text == "--no-cross-namespace-refs" {
			return "clusters/prod/flux-system/kustomization.yaml:9"
		}
		return ""
	}
	hc := deployment(HelmController, "--no-cross-namespace-refs", "--no-remote-bases", "--default-service-account", "tenant")
	nc := deployment(NotificationController, "--no-cross-namespace-refs=true", "--default-service-account=default")
	other := deployment("source-controller", "--no-cross-namespace-refs=true")
	set, err := ReadObjects([]Object{kc, hc, nc, other})
	if err != nil {
		t.Fatal(err)
	}
	at := "clusters/prod/flux-system/gotk-components.yaml:40 (Deployment flux-system/%s args)"
	want := Lockdown{
		Kustomize: ControllerFlags{
			DefaultServiceAccount: Setting{Value: "default", At: strings.ReplaceAll(at, "%s", KustomizeController)},
			NoCrossNamespaceRefs:  Setting{Value: "true", At: "clusters/prod/flux-system/kustomization.yaml:9 (Deployment flux-system/kustomize-controller args)"},
			NoRemoteBases:         Setting{Value: "true", At: strings.ReplaceAll(at, "%s", KustomizeController)},
			From:                  []string{"clusters/prod/flux-system/gotk-components.yaml:40 (Deployment flux-system/kustomize-controller)"},
		},
		Helm: ControllerFlags{
			DefaultServiceAccount: Setting{Value: "tenant", At: strings.ReplaceAll(at, "%s", HelmController)},
			NoCrossNamespaceRefs:  Setting{Value: "true", At: strings.ReplaceAll(at, "%s", HelmController)},
			From:                  []string{"clusters/prod/flux-system/gotk-components.yaml:40 (Deployment flux-system/helm-controller)"},
		},
		Notification: ControllerFlags{
			NoCrossNamespaceRefs: Setting{Value: "true", At: strings.ReplaceAll(at, "%s", NotificationController)},
			From:                 []string{"clusters/prod/flux-system/gotk-components.yaml:40 (Deployment flux-system/notification-controller)"},
		},
		Files: []string{"clusters/prod/flux-system/gotk-components.yaml"},
	}
	if diff := cmp.Diff(want, set.Lockdown); diff != "" {
		t.Errorf("lockdown (-want +got):\n%s", diff)
	}
	// Added to the configuration's set, as discovery does.
	s := &Set{}
	if _, err := s.Add(&Unit{Ref: Ref{"flux-system", "flux-system"}}, set); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, s.Lockdown); diff != "" {
		t.Errorf("lockdown added (-want +got):\n%s", diff)
	}
}

// Two declarations that disagree are noted, and the stricter is taken: a
// boolean set over unset or false, an account over none, of two accounts
// the first declared.
func TestLockdownDisagreementTakesTheStricter(t *testing.T) {
	tests := []struct {
		name      string
		first     []string
		second    []string
		want      ControllerFlags // values only
		noteParts []string        // "" for no note
	}{
		{name: "agree", first: []string{"--no-cross-namespace-refs=true"}, second: []string{"--no-cross-namespace-refs"},
			want: ControllerFlags{NoCrossNamespaceRefs: Setting{Value: "true"}}},
		{name: "false and unset agree", first: []string{"--no-cross-namespace-refs=false"}, second: nil,
			want: ControllerFlags{NoCrossNamespaceRefs: Setting{Value: "false"}}},
		{name: "true over unset", first: nil, second: []string{"--no-cross-namespace-refs=true"},
			want:      ControllerFlags{NoCrossNamespaceRefs: Setting{Value: "true"}},
			noteParts: []string{"kustomize-controller's lockdown is declared twice, differently", "does not set it", "sets --no-cross-namespace-refs=true", "the stricter, --no-cross-namespace-refs=true, is taken"}},
		{name: "true over false", first: []string{"--no-remote-bases=true"}, second: []string{"--no-remote-bases=false"},
			want:      ControllerFlags{NoRemoteBases: Setting{Value: "true"}},
			noteParts: []string{"the stricter, --no-remote-bases=true, is taken"}},
		{name: "an account over none", first: nil, second: []string{"--default-service-account=default"},
			want:      ControllerFlags{DefaultServiceAccount: Setting{Value: "default"}},
			noteParts: []string{"the stricter, --default-service-account=default, is taken"}},
		{name: "of two accounts the first", first: []string{"--default-service-account=a"}, second: []string{"--default-service-account=b"},
			want:      ControllerFlags{DefaultServiceAccount: Setting{Value: "a"}},
			noteParts: []string{"sets --default-service-account=a", "sets --default-service-account=b", "the stricter, --default-service-account=a, is taken"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Set{}
			for i, args := range [][]string{tt.first, tt.second} {
				d := deployment(KustomizeController, args...)
				d.Line = 10 * (i + 1)
				found, err := ReadObjects([]Object{d})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Add(&Unit{Ref: Ref{"flux-system", "flux-system"}}, found); err != nil {
					t.Fatal(err)
				}
			}
			got := s.Lockdown.Kustomize
			values := ControllerFlags{DefaultServiceAccount: Setting{Value: got.DefaultServiceAccount.Value}, NoCrossNamespaceRefs: Setting{Value: got.NoCrossNamespaceRefs.Value}, NoRemoteBases: Setting{Value: got.NoRemoteBases.Value}}
			if diff := cmp.Diff(tt.want, values); diff != "" {
				t.Errorf("taken (-want +got):\n%s", diff)
			}
			notes := strings.Join(s.Notes, "\n")
			if len(tt.noteParts) == 0 && strings.Contains(notes, "declared twice") {
				t.Errorf("a note where they agree:\n%s", notes)
			}
			for _, p := range tt.noteParts {
				if !strings.Contains(notes, p) {
					t.Errorf("notes lack %q:\n%s", p, notes)
				}
			}
		})
	}
}

// A FluxInstance's spec.cluster.multitenant declares the lockdown Flux
// Operator sets (profileClusterMultitenant): both controllers refuse
// cross-namespace references and default to tenantDefaultServiceAccount
// (else "default"), kustomize-controller refuses remote bases; the
// Kustomization its spec.sync makes runs as kustomize-controller.
// Without multitenant, nothing is locked down.
func TestLockdownFromFluxInstance(t *testing.T) {
	instance := func(cluster string) string {
		return `apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: "2.x"
    registry: ghcr.io/fluxcd
` + cluster + `  sync:
    kind: GitRepository
    url: https://github.com/example/fleet.git
    ref: refs/heads/main
    path: clusters/staging
`
	}
	tests := []struct {
		name    string
		cluster string
		account string // "" for no lockdown
		at      string
	}{
		{name: "multitenant, tenant account", cluster: "  cluster:\n    multitenant: true\n    tenantDefaultServiceAccount: flux\n", account: "flux",
			at: "clusters/staging/flux-system/flux.yaml:12 (FluxInstance flux-system/flux spec.cluster.tenantDefaultServiceAccount)"},
		{name: "multitenant, the operator's default account", cluster: "  cluster:\n    multitenant: true\n", account: "default",
			at: "clusters/staging/flux-system/flux.yaml:11 (FluxInstance flux-system/flux spec.cluster.multitenant)"},
		{name: "not multitenant", cluster: "  cluster:\n    multitenant: false\n    tenantDefaultServiceAccount: flux\n"},
		{name: "no cluster", cluster: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "clusters", "staging", "flux-system")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "flux.yaml"), []byte(instance(tt.cluster)), 0o644); err != nil {
				t.Fatal(err)
			}
			set, err := Read(root, filepath.Join(root, "clusters", "staging"))
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Units) != 1 {
				t.Fatalf("units: %d, want the sync's", len(set.Units))
			}
			l, sync := set.Lockdown, set.Units[0]
			if tt.account == "" {
				if !l.IsZero() || sync.ServiceAccountName != "" {
					t.Fatalf("locked down without multitenant: %+v, sync as %q", l, sync.ServiceAccountName)
				}
				return
			}
			for _, c := range []ControllerFlags{l.Kustomize, l.Helm} {
				if c.DefaultServiceAccount.Value != tt.account || c.DefaultServiceAccount.At != tt.at || !c.NoCrossNamespaceRefs.On() {
					t.Errorf("controller flags: %+v", c)
				}
			}
			if !l.Notification.NoCrossNamespaceRefs.On() || l.Notification.DefaultServiceAccount.Value != "" {
				t.Errorf("notification-controller: %+v", l.Notification)
			}
			if !l.Kustomize.NoRemoteBases.On() || l.Helm.NoRemoteBases.On() {
				t.Errorf("no-remote-bases: kustomize %+v, helm %+v", l.Kustomize.NoRemoteBases, l.Helm.NoRemoteBases)
			}
			if sync.ServiceAccountName != KustomizeController {
				t.Errorf("the sync runs as %q, want kustomize-controller (the operator's patch)", sync.ServiceAccountName)
			}
		})
	}
}

// A sync that applies itself patched with serviceAccountName (the
// lockdown's patch of gotk-sync.yaml's Kustomization) runs as that
// account: Flux reconciles it as its build made it.
func TestSyncAppliedWithItsLockdownAccount(t *testing.T) {
	sync := &Unit{Name: "flux-system", Ref: Ref{"flux-system", "flux-system"}, File: "clusters/prod/flux-system/gotk-sync.yaml", Line: 12, Path: "clusters/prod", Sync: true}
	s := &Set{Units: []*Unit{sync}}
	found, err := ReadObjects([]Object{ks("flux-system", "flux-system", "./clusters/prod", "  serviceAccountName: kustomize-controller")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(sync, found); err != nil {
		t.Fatal(err)
	}
	if sync.SelfAccount != KustomizeController || sync.ServiceAccountName != "" {
		t.Fatalf("sync runs as %q (written %q), want kustomize-controller, as written none", sync.SelfAccount, sync.ServiceAccountName)
	}
	if !SameSpec(sync, &Unit{Name: "flux-system", Ref: sync.Ref, Path: sync.Path}) {
		t.Error("the account it applies itself with changed its spec as written (a PR's diff would always render it)")
	}
	if notes := strings.Join(s.Notes, "\n"); !strings.Contains(notes, "spec.serviceAccountName kustomize-controller, as emitted by flux-system/flux-system, it applies itself with it") {
		t.Errorf("notes:\n%s", notes)
	}
}

// A change may change the lockdown in a file declaring it, and in a
// kustomization beside or above one (the patches adding the flags).
func TestLockdownMayChange(t *testing.T) {
	l := Lockdown{Files: []string{"clusters/prod/flux-system/gotk-components.yaml"}}
	for file, want := range map[string]bool{
		"clusters/prod/flux-system/gotk-components.yaml":   true,
		"clusters/prod/flux-system/kustomization.yaml":     true,
		"clusters/prod/kustomization.yaml":                 true,
		"kustomization.yaml":                               true,
		"clusters/prod/flux-system/gotk-sync.yaml":         false,
		"clusters/staging/flux-system/kustomization.yaml":  false,
		"clusters/prod/flux-system/sub/kustomization.yaml": false,
		"apps/kustomization.yaml":                          false,
	} {
		if got := l.MayChange(file); got != want {
			t.Errorf("%s: %v, want %v", file, got, want)
		}
	}
}
