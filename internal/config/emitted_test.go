package config

import (
	"cmp"
	"fmt"
	"strings"
	"testing"
)

// ks is a Kustomization object as a build emits it.
func ks(ns, name, path string, extra ...string) Object {
	return Object{File: "apps/" + name + ".yaml", Line: 3, YAML: []byte(fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: %s
  namespace: %s
spec:
  interval: 10m
  path: %s
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
%s`, name, ns, path, strings.Join(extra, "\n")))}
}

// What a unit's build emits joins the configuration as
// kustomize-controller would reach it: new Kustomizations as units with
// the chain that emitted them; the chain's own (Flux's sync applying
// itself) and the same one reached twice not again; another spec under
// the same name, a field no version has and a loop too deep are errors
// naming the object, its file and line, and the chain.
func TestAddWhatABuildEmits(t *testing.T) {
	root := &Unit{Name: "flux-system", Ref: Ref{"flux-system", "flux-system"}, File: "clusters/prod/flux-system/gotk-sync.yaml", Line: 12, Path: "clusters/prod"}
	read, err := ReadObjects([]Object{ks("flux-system", "apps", "./apps")})
	if err != nil {
		t.Fatal(err)
	}
	apps := read.Units[0]
	apps.File, apps.Line = "clusters/prod/apps.yaml", 1
	deep := &Unit{Name: "deep", Ref: Ref{"x", "deep"}, EmittedBy: make([]Ref, MaxDepth)}
	for i := range deep.EmittedBy {
		deep.EmittedBy[i] = Ref{"x", fmt.Sprintf("k%d", i)}
	}
	tests := []struct {
		name    string
		parent  *Unit
		objects []Object
		added   []string // chains of the units added
		err     string   // "" for none
		note    string
		apps    string // the chain of apps (read from a file) after
	}{
		{
			name:    "new Kustomizations join, with their chain",
			parent:  root,
			objects: []Object{ks("flux-system", "infra", "./infrastructure"), ks("team-a", "web", "./web", "  dependsOn:\n  - name: infra\n    namespace: flux-system")},
			added:   []string{"flux-system/flux-system > flux-system/infra", "flux-system/flux-system > team-a/web"},
		},
		{
			name:    "the sync applying itself is not run again",
			parent:  root,
			objects: []Object{ks("flux-system", "flux-system", "./clusters/prod")},
			note:    "is not run again",
		},
		{
			name:    "the same Kustomization reached twice is one unit, run after the one applying it",
			parent:  root,
			objects: []Object{ks("flux-system", "apps", "./apps")},
			apps:    "flux-system/flux-system > flux-system/apps",
		},
		{
			name:    "another spec under the same name is refused",
			parent:  root,
			objects: []Object{ks("flux-system", "apps", "./apps/other")},
			err:     "apps/apps.yaml:3: Kustomization flux-system/apps: emitted by flux-system/flux-system, is also defined by clusters/prod/apps.yaml:1 with another spec",
		},
		{
			name:    "a field no version has is refused at the object's line",
			parent:  root,
			objects: []Object{ks("flux-system", "typo", "./typo", "  prunne: true")},
			added:   []string{"flux-system/flux-system > flux-system/typo"},
			err:     "apps/typo.yaml:3: Kustomization flux-system/typo: spec.prunne:",
		},
		{
			name:    "a loop is cut at MaxDepth",
			parent:  deep,
			objects: []Object{ks("x", "k99", "./k")},
			err:     "more than 10 Kustomizations deep",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apps := *apps
			set := &Set{Units: []*Unit{root, &apps}}
			found, err := ReadObjects(tt.objects)
			var added []*Unit
			if err == nil {
				added, err = set.Add(tt.parent, found)
			}
			if err == nil {
				err = set.Refusals() // refused when its turn comes
			}
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			var chains []string
			for _, u := range added {
				chains = append(chains, u.Chain())
			}
			if strings.Join(chains, ";") != strings.Join(tt.added, ";") {
				t.Errorf("added %q, want %q", chains, tt.added)
			}
			if want := cmp.Or(tt.apps, "flux-system/apps"); set.Units[1].Chain() != want {
				t.Errorf("apps: %s, want %s", set.Units[1].Chain(), want)
			}
			if tt.note != "" && !strings.Contains(strings.Join(set.Notes, "\n"), tt.note) {
				t.Errorf("notes %q lack %q", set.Notes, tt.note)
			}
			if err == nil {
				if err := set.Name(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// A ConfigMap a build emits that no Kustomization could read (a number
// where data wants a string) is the API server's to refuse when its unit
// applies it, not a problem of the configuration.
func TestReadObjectsLeavesBadValuesToTheAPIServer(t *testing.T) {
	set, err := ReadObjects([]Object{{File: "first/cm.yaml", Line: 1, YAML: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\ndata:\n  version: 1\n")}})
	if err != nil || len(set.Values) != 0 {
		t.Errorf("values %v, error %v", set, err)
	}
}

// The Providers and Alerts a build emits join the configuration with the
// chain that emitted them; the same one emitted again is kept once.
func TestAddEmittedNotifications(t *testing.T) {
	root := &Unit{Name: "flux-system", Ref: Ref{"flux-system", "flux-system"}}
	alert := Object{File: "apps/alert.yaml", Line: 7, YAML: []byte("apiVersion: notification.toolkit.fluxcd.io/v1beta3\nkind: Alert\nmetadata:\n  name: on-call\n  namespace: apps\nspec:\n  providerRef: {name: slack}\n")}
	set := &Set{Units: []*Unit{root}}
	for range 2 {
		found, err := ReadObjects([]Object{alert})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := set.Add(root, found); err != nil {
			t.Fatal(err)
		}
	}
	if len(set.Notifications) != 1 {
		t.Fatalf("notifications: %+v", set.Notifications)
	}
	n := set.Notifications[0]
	if n.Kind != NotificationAlert || n.Ref != (Ref{"apps", "on-call"}) || n.File != "apps/alert.yaml" || n.Line != 7 || len(n.EmittedBy) != 1 || n.EmittedBy[0] != root.Ref {
		t.Errorf("the Alert: %+v", n)
	}
}

// A Kustomization reached again (Flux's sync read from its file, then as
// it applies itself) says its notes once.
func TestAddSaysANoteOnce(t *testing.T) {
	root := &Unit{Name: "flux-system", Ref: Ref{"flux-system", "flux-system"}}
	ks := Object{File: "clusters/prod/apps.yaml", Line: 1, YAML: []byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 10m\n  sourceRef: {kind: GitRepository, name: flux-system}\n  path: ./apps\n")}
	set := &Set{Units: []*Unit{root}}
	for range 2 {
		found, err := ReadObjects([]Object{ks})
		if err != nil {
			t.Fatal(err)
		}
		if len(found.Notes) == 0 {
			t.Fatal("the Kustomization says nothing of its interval")
		}
		if _, err := set.Add(root, found); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, n := range set.Notes {
		if seen[n] {
			t.Errorf("said twice: %s", n)
		}
		seen[n] = true
	}
}
