package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
)

// units maps each unit's metadata.name to what get takes from it.
func units[V any](set *Set, get func(*Unit) V) map[string]V {
	out := map[string]V{}
	for _, u := range set.Units {
		out[u.Ref.Name] = get(u)
	}
	return out
}

func TestTimeoutDefaultsPerVersion(t *testing.T) {
	t.Parallel()
	got := units(mustReadCase(t, "timeouts.yaml"), func(u *Unit) time.Duration { return u.Timeout })
	want := map[string]time.Duration{
		"v1-interval":            9*time.Minute + 30*time.Second, // interval less 30s
		"v1-short-interval":      30 * time.Second,               // floor 30s
		"v1-timeout":             2*time.Minute + 30*time.Second,
		"v1-short-timeout":       30 * time.Second,
		"v1beta2-interval":       4*time.Minute + 30*time.Second,
		"v1beta1-interval":       5 * time.Minute, // the interval itself
		"v1beta1-short-interval": time.Minute,     // floor 1m
		"v1beta1-short-timeout":  time.Minute,
		"v1beta1-go-duration":    2 * time.Minute, // 120000000us: v1 would refuse it
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeouts mismatch (-want +got):\n%s", diff)
	}
}

func TestDeletionPolicyResolved(t *testing.T) {
	t.Parallel()
	got := units(mustReadCase(t, "deletion-policy.yaml"), func(u *Unit) string { return u.DeletionPolicy })
	want := map[string]string{
		"default-prune": "Delete", // MirrorPrune, the default, with prune
		"default-keep":  "Orphan", // and without
		"mirror-keep":   "Orphan",
		"delete":        "Delete",
		"orphan":        "Orphan",
		"wait":          "WaitForTermination",
		"v1beta2-prune": "Delete", // no field: as MirrorPrune
		"v1beta1-keep":  "Orphan",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deletion policies mismatch (-want +got):\n%s", diff)
	}
}

// Units share one inventory namespace, so two Kustomizations named alike
// get their namespace in their unit names; the others keep theirs.
func TestUnitNamesQualifiedWhenShared(t *testing.T) {
	t.Parallel()
	set := mustReadCase(t, "names-shared")
	var names []string
	for _, u := range set.Units {
		names = append(names, u.Name)
	}
	if diff := cmp.Diff([]string{"team-a-apps", "infra", "team-b-apps"}, names); diff != "" {
		t.Errorf("unit names in file order mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Ref{{"platform", "infra"}}, set.Units[0].DependsOn); diff != "" {
		t.Errorf("dependsOn mismatch (-want +got):\n%s", diff)
	}
}

// Units come sorted by file path, then document order; WalkDir would
// visit order/apps/ before order/apps.yaml.
func TestUnitsInFileOrder(t *testing.T) {
	t.Parallel()
	var got []string
	for _, u := range mustReadCase(t, "order").Units {
		got = append(got, u.File+" "+u.Name)
	}
	want := []string{"order/apps.yaml first", "order/apps/web.yaml second", "order/apps/web.yaml third"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("units mismatch (-want +got):\n%s", diff)
	}
}

// The unit name rule is inventory.ValidateName's, copied so the reader
// does not import the engine.
func TestUnitNameRuleIsInventorys(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"apps", "team-a-apps", "a", "0", "a-b-c", strings.Repeat("a", 63),
		"", "-apps", "apps-", "Apps", "apps.v2", "apps_v2", strings.Repeat("a", 64),
	} {
		if got, want := validateUnitName(name) == nil, inventory.ValidateName(name) == nil; got != want {
			t.Errorf("%q: config accepts: %v, inventory accepts: %v", name, got, want)
		}
	}
}

// A Kustomization whose path holds Kustomizations being read (here
// nested) is no sync of the configuration: it runs, as every other; the
// Kustomizations it applies are found again by building it, and the
// dependency on it is kept.
func TestKustomizationOfKustomizationsRuns(t *testing.T) {
	t.Parallel()
	set := mustReadCase(t, "nested")
	got := units(set, func(u *Unit) []Ref { return u.DependsOn })
	want := map[string][]Ref{"apps": nil, "web": {{"flux-system", "apps"}, {"flux-system", "database"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("units mismatch (-want +got):\n%s", diff)
	}
	if sync := set.SyncSources(); len(sync) != 0 {
		t.Errorf("sync sources %v", sync)
	}
}

// Flux's own sync is the Kustomization whose path, in this checkout's
// tree, is the configuration's directory (or above its own file): a
// Kustomization of another source is never it, whatever its path says;
// a source's root ("./") is it only for a configuration of the root or
// given as that one file.
func TestWhichKustomizationIsTheSync(t *testing.T) {
	t.Parallel()
	const git, oci = GitRepositoryKind, OCIRepositoryKind
	for _, tc := range []struct {
		name   string
		dir    string // the configuration's directory
		single bool   // given as its one file
		file   string // the Kustomization's
		kind   string // its sourceRef's
		path   string
		sync   bool
	}{
		{name: "flux bootstrap's sync of the directory", dir: "clusters/prod", file: "clusters/prod/flux-system/gotk-sync.yaml", kind: git, path: "clusters/prod", sync: true},
		{name: "the sync given as its file", dir: "clusters/prod/flux-system", single: true, file: "clusters/prod/flux-system/gotk-sync.yaml", kind: git, path: "clusters/prod", sync: true},
		{name: "the sync read from above", dir: ".", file: "clusters/prod/flux-system/gotk-sync.yaml", kind: git, path: "clusters/prod", sync: true},
		{name: "bootstrapped at the root", dir: ".", file: "flux-system/gotk-sync.yaml", kind: git, path: ".", sync: true},
		{name: "bootstrapped at the root, given as its file", dir: "flux-system", single: true, file: "flux-system/gotk-sync.yaml", kind: git, path: ".", sync: true},
		{name: "an OCI artifact's root", dir: "clusters/prod", file: "clusters/prod/apps-sync.yaml", kind: oci, path: "."},
		{name: "an OCI artifact's path like the directory", dir: "clusters/prod", file: "clusters/prod/apps-sync.yaml", kind: oci, path: "clusters/prod"},
		{name: "an OCI artifact given as its file", dir: "clusters/prod", single: true, file: "clusters/prod/apps-sync.yaml", kind: oci, path: "."},
		{name: "a tenant repository's root", dir: "clusters/prod", file: "clusters/prod/tenants/dev-team.yaml", kind: git, path: "."},
		{name: "a Bucket's root", dir: "clusters/prod", file: "clusters/prod/bucket.yaml", kind: BucketKind, path: "."},
		{name: "a Kustomization of Kustomizations below", dir: "clusters/prod", file: "clusters/prod/apps.yaml", kind: git, path: "clusters/prod/apps"},
		{name: "an app", dir: "clusters/prod", file: "clusters/prod/apps.yaml", kind: git, path: "apps/prod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &reader{dir: tc.dir, single: tc.single}
			u := &Unit{File: tc.file, Path: tc.path, Source: SourceRef{Kind: tc.kind, Name: "s", Namespace: "flux-system"}}
			if got := r.sync(u); got != tc.sync {
				t.Errorf("sync: %v, want %v", got, tc.sync)
			}
		})
	}
}

// The same Set, read from the repository root or from the cluster's
// directory: nothing else in a repository is a Flux Kustomization.
func TestReadFromRootOrClusterDir(t *testing.T) {
	t.Parallel()
	root := testRoot(t, "flux-example")
	fromRoot, err := Read(root, root)
	if err != nil {
		t.Fatal(err)
	}
	fromDir, err := Read(root, filepath.Join(root, "clusters", "production"))
	if err != nil {
		t.Fatal(err)
	}
	// A HelmRepository is read wherever it is (a HelmRelease of any unit
	// may name it): the root holds the app's.
	if fromRoot.Source(HelmRepositoryKind, Ref{Namespace: "podinfo", Name: "podinfo"}) == nil {
		t.Errorf("the app's HelmRepository is not read from the root")
	}
	fromRoot.Sources = slices.DeleteFunc(fromRoot.Sources, func(s *Source) bool { return s.Kind == HelmRepositoryKind })
	if diff := cmp.Diff(render(t, fromRoot), render(t, fromDir)); diff != "" {
		t.Errorf("sets mismatch (-read from the root +read from clusters/production):\n%s", diff)
	}
}

// A file is read alone; Flux's sync is recognised by the file's directory.
func TestReadOneFile(t *testing.T) {
	t.Parallel()
	root := testRoot(t, "flux-example")
	set, err := Read(root, filepath.Join(root, "clusters/production/flux-system/gotk-sync.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The configuration is the root Kustomization's file: it runs, to
	// find by building the Kustomizations it applies, and its source is
	// the configuration's own.
	if len(set.Units) != 1 || set.Units[0].Ref.Name != "flux-system" || !set.Units[0].Sync {
		t.Fatalf("units %+v", set.Units)
	}
	if got := set.SyncSources(); len(got) != 1 || got[0].Name != "flux-system" {
		t.Errorf("sync sources %v", got)
	}
	// A file of Kustomizations that holds no root is read as ever.
	set, err = Read(root, filepath.Join(root, "clusters/production/apps.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Units) != 1 || set.Units[0].Sync {
		t.Errorf("units %+v", set.Units)
	}
}

func TestReadOutsideRoot(t *testing.T) {
	t.Parallel()
	root := testRoot(t, "flux-example")
	_, err := Read(filepath.Join(root, "apps"), filepath.Join(root, "clusters"))
	if err == nil || !strings.Contains(err.Error(), "is outside the repository root") {
		t.Errorf("got %v", err)
	}
	if _, err := Read("relative", root); err == nil {
		t.Error("a relative root was taken")
	}
}

// Hidden directories and files are not read (the copy in .archive would
// be a duplicate), nor files other than *.yaml and *.yml.
func TestHiddenAndOtherFilesSkipped(t *testing.T) {
	t.Parallel()
	set := mustReadCase(t, "hidden")
	if len(set.Units) != 1 || set.Units[0].File != "hidden/apps.yaml" {
		t.Errorf("units: %+v", set.Units)
	}
}

// A document whose header says it is some other kind is not decoded: the
// broken CustomResourceDefinition is never parsed.
func TestOtherKindsSkippedUndecoded(t *testing.T) {
	t.Parallel()
	set := mustReadCase(t, "skip-crd.yaml")
	if len(set.Units) != 1 || set.Units[0].Name != "after-crd" || set.Units[0].Line != 11 {
		t.Errorf("units: %+v", set.Units)
	}
}

// Kustomize's Kustomization, other kinds, lists, scalars, comments and
// JSON documents are all let be, in one multi-document file.
func TestOtherKindsIgnored(t *testing.T) {
	t.Parallel()
	set := mustReadCase(t, "other-kinds.yaml")
	if len(set.Units) != 1 || set.Units[0].Ref != (Ref{"flux-system", "apps"}) {
		t.Errorf("units: %+v", set.Units)
	}
	if len(set.Values) != 0 {
		t.Errorf("values %+v", set.Values)
	}
}

func TestValues(t *testing.T) {
	t.Parallel()
	set := mustReadCase(t, "values.yaml")
	if len(set.Values) != 4 {
		t.Fatalf("values: %+v", set.Values)
	}
	cm, secret, sealed, empty := set.Values[0], set.Values[1], set.Values[2], set.Values[3]

	if cm.Kind != "ConfigMap" || cm.Ref != (Ref{"default", "cluster-vars"}) || cm.Encrypted || cm.Raw != nil {
		t.Errorf("configmap: %+v", cm)
	}
	// binaryData is left out: Flux substitutes from data only.
	if diff := cmp.Diff(map[string]string{"domain": "example.com", "empty": ""}, cm.Data); diff != "" {
		t.Errorf("configmap data mismatch (-want +got):\n%s", diff)
	}
	// data decoded, stringData laid over it.
	if diff := cmp.Diff(map[string]string{"user": "admin", "token": "new"}, secret.Data); diff != "" {
		t.Errorf("secret data mismatch (-want +got):\n%s", diff)
	}

	file, err := os.ReadFile(filepath.Join("testdata", "cases", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, raw, _ := strings.Cut(string(file), "---\n# Encrypted")
	raw, _, _ = strings.Cut("# Encrypted"+raw, "---\n")
	if !sealed.Encrypted || sealed.Data != nil || string(sealed.Raw) != raw {
		t.Errorf("encrypted secret: encrypted %v, data %v, raw:\n%s\nwant:\n%s", sealed.Encrypted, sealed.Data, sealed.Raw, raw)
	}
	if sealed.Ref != (Ref{"flux-system", "sealed"}) || sealed.Line != 23 {
		t.Errorf("encrypted secret: %+v", sealed)
	}

	if empty.Data == nil || len(empty.Data) != 0 {
		t.Errorf("a ConfigMap without data: %+v", empty)
	}

	if got := set.Lookup("Secret", Ref{"flux-system", "cluster-secrets"}); len(got) != 1 || got[0] != secret {
		t.Errorf("lookup: %+v", got)
	}
	if got := set.Lookup("ConfigMap", Ref{"flux-system", "cluster-secrets"}); got != nil {
		t.Errorf("lookup by the wrong kind: %+v", got)
	}
}

// No problem with a Secret quotes what it holds.
func TestSecretValuesNeverPrinted(t *testing.T) {
	t.Parallel()
	_, err := readCase(t, "secret-problems.yaml")
	if err == nil {
		t.Fatal("no error")
	}
	for _, value := range []string{"hunter2", "plaintext", "48213377", "s3cr3t", "token-value", "YWRtaW4", "admin"} {
		if strings.Contains(err.Error(), value) {
			t.Errorf("the error shows %q:\n%v", value, err)
		}
	}
}

// The annotation kustomize-deploy.dev/helm-controller: "true" hands a
// unit's HelmReleases to the cluster's helm-controller; other values are
// refused by name.
func TestHelmControllerAnnotation(t *testing.T) {
	t.Parallel()
	got := units(mustReadCase(t, "helm-controller.yaml"), func(u *Unit) bool { return u.HelmController })
	want := map[string]bool{"rendered": false, "by-controller": true, "rendered-explicitly": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("helm-controller mismatch (-want +got):\n%s", diff)
	}
}

// An operator-managed fleet has no gotk-sync.yaml: its FluxInstance's
// spec.sync makes Flux's own sync, a source and a Kustomization named
// after the instance's namespace. The source joins the configuration's,
// the Kustomization is a unit, Flux's own sync (it applies the
// configuration's directory), and units may depend on it.
func TestFluxInstanceSyncIsFluxsOwnSync(t *testing.T) {
	t.Parallel()
	set := mustReadCase(t, "operator/clusters/staging")
	src := SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"}
	if diff := cmp.Diff([]SourceRef{src}, set.SyncSources()); diff != "" {
		t.Errorf("sync sources mismatch (-want +got):\n%s", diff)
	}
	got := set.Source("GitRepository", Ref{"flux-system", "flux-system"})
	if got == nil || got.URL != "https://github.com/example/fleet.git" || got.Git == nil || got.Git.Name != "refs/heads/main" ||
		got.Git.SecretName != "flux-system" || got.File != "operator/clusters/staging/flux-system/flux-instance.yaml" || got.Line != 1 {
		t.Errorf("the sync's source: %+v", got)
	}
	sync := set.Unit(Ref{"flux-system", "flux-system"})
	if sync == nil || !sync.Sync || !sync.Instance || sync.Path != "operator/clusters/staging" || !sync.Prune || sync.Source != src ||
		sync.File != "operator/clusters/staging/flux-system/flux-instance.yaml" || sync.Line != 1 || len(sync.Refused) > 0 {
		t.Fatalf("the sync's unit: %+v", sync)
	}
	if set.Units[0] != sync {
		t.Errorf("the sync does not run first: %v", set.Units[0].Ref)
	}
	apps := set.Unit(Ref{"flux-system", "apps"})
	if apps == nil || !slices.Equal(apps.DependsOn, []Ref{{"flux-system", "flux-system"}}) {
		t.Errorf("apps: %+v", apps)
	}
	if !slices.ContainsFunc(set.Notes, func(n string) bool { return strings.Contains(n, "made by FluxInstance flux-system/flux's spec.sync") }) {
		t.Errorf("notes: %q", set.Notes)
	}

	// One whose sync does not read is left to the operator's CRD: a note.
	set = mustReadCase(t, "instance-bad.yaml")
	if len(set.Units) != 0 || len(set.Sources) != 0 || len(set.Notes) != 1 || !strings.Contains(set.Notes[0], `spec.sync.kind: "Helm" is not one of`) {
		t.Errorf("units %+v, sources %+v, notes %q", set.Units, set.Sources, set.Notes)
	}
}

// v1's CEL fields are read as written: each healthCheckExprs entry, and
// the readyExpr of the dependency it is written on; the document is kept
// for the expressions' self and dep.
func TestCELFieldsRead(t *testing.T) {
	t.Parallel()
	set := mustReadCase(t, "unsupported.yaml")
	u := set.Unit(Ref{"flux-system", "apps"})
	want := []HealthCheckExpr{{APIVersion: "example.com/v1", Kind: "Widget", Current: "status.ready == true"}}
	if diff := cmp.Diff(want, u.HealthCheckExprs); diff != "" {
		t.Errorf("healthCheckExprs mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ReadyExpr{{Dependency: Ref{"flux-system", "infra"}, Expr: "dep.status.ready"}}, u.ReadyExprs); diff != "" {
		t.Errorf("readyExprs mismatch (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(string(u.Document), "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n") {
		t.Errorf("document %q", u.Document)
	}
}

// Seed 004's v1alpha1 is read with its documented meaning: prune is a
// label selector, dependsOn names Kustomizations of the same namespace,
// healthChecks name apps/v1 workloads, the timeout defaults to the
// interval, serviceAccount names its namespace, the source is in the
// Kustomization's namespace; a note says how it was read.
func TestV1alpha1Read(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	doc := `apiVersion: kustomize.fluxcd.io/v1alpha1
kind: Kustomization
metadata:
  name: backend
spec:
  dependsOn:
  - common
  - istio
  serviceAccount:
    name: webapp-reconciler
    namespace: webapp
  interval: 5m
  path: "./webapp/backend/"
  prune: "part-of=webapp,component=backend"
  generate: true
  validation: server
  sourceRef:
    kind: GitRepository
    name: webapp
  healthChecks:
  - kind: Deployment
    name: backend
    namespace: dev
---
apiVersion: kustomize.fluxcd.io/v1alpha1
kind: Kustomization
metadata:
  name: istio
spec:
  interval: 5m
  path: "./profiles/default/"
  suspend: true
  timeout: 2m
  sourceRef:
    kind: GitRepository
    name: istio
`
	if err := os.WriteFile(filepath.Join(root, "seed.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := Read(root, root)
	if err != nil {
		t.Fatal(err)
	}
	backend, istio := set.Unit(Ref{"default", "backend"}), set.Unit(Ref{"default", "istio"})
	if backend == nil || istio == nil {
		t.Fatalf("units %+v", set.Units)
	}
	want := &Unit{Name: "backend", Ref: Ref{"default", "backend"}, File: "seed.yaml", Line: 1, APIVersion: "kustomize.fluxcd.io/v1alpha1",
		Source: SourceRef{Kind: "GitRepository", Namespace: "default", Name: "webapp"}, Path: "webapp/backend",
		DependsOn: []Ref{{"default", "common"}, {"default", "istio"}}, Prune: true, PruneSelector: "part-of=webapp,component=backend",
		Timeout: 5 * time.Minute, HealthChecks: []HealthCheck{{APIVersion: "apps/v1", Kind: "Deployment", Name: "backend", Namespace: "dev"}},
		Labels: map[string]string{"part-of": "webapp", "component": "backend"}, ServiceAccountName: "webapp-reconciler", ServiceAccountNamespace: "webapp",
		DeletionPolicy: "Delete", Validation: "server"}
	got := *backend
	got.Document = nil
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Errorf("backend mismatch (-want +got):\n%s", diff)
	}
	if istio.Timeout != 2*time.Minute || !istio.Suspend || istio.Prune || istio.DeletionPolicy != "Orphan" {
		t.Errorf("istio: %+v", istio)
	}
	note := `default/backend: read as kustomize.fluxcd.io/v1alpha1, the API of Flux's prototype kustomize-controller (spec.prune "part-of=webapp,component=backend" prunes only the objects matching it)`
	if !slices.Contains(set.Notes, note) {
		t.Errorf("notes lack %q:\n%s", note, strings.Join(set.Notes, "\n"))
	}
}

func TestTagsAnnotation(t *testing.T) {
	t.Parallel()
	got := units(mustReadCase(t, "tags.yaml"), func(u *Unit) []string { return u.Tags })
	if diff := cmp.Diff(map[string][]string{"api": {"backend", "critical"}, "web": nil}, got); diff != "" {
		t.Errorf("tags mismatch (-want +got):\n%s", diff)
	}
}

// Notification Providers and Alerts are kept as written, named, with
// where they are; Receivers and other groups' Alerts are not; a
// Kustomization's own labels and annotations are kept for Alerts to
// select its events by.
func TestNotifications(t *testing.T) {
	t.Parallel()
	set := mustReadCase(t, "notifications.yaml")
	type found struct {
		Kind, APIVersion string
		Ref              Ref
		Line             int
		Starts           string
	}
	var got []found
	for _, n := range set.Notifications {
		first, _, _ := strings.Cut(string(n.Raw), "\n")
		got = append(got, found{n.Kind, n.APIVersion, n.Ref, n.Line, first})
	}
	want := []found{
		{"Provider", "notification.toolkit.fluxcd.io/v1beta3", Ref{"flux-system", "slack"}, 16, "apiVersion: notification.toolkit.fluxcd.io/v1beta3"},
		{"Alert", "notification.toolkit.fluxcd.io/v1beta2", Ref{"default", "on-call"}, 27, "apiVersion: notification.toolkit.fluxcd.io/v1beta2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notifications mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"team": "web"}, set.Units[0].Meta.Labels); diff != "" {
		t.Errorf("the Kustomization's labels mismatch (-want +got):\n%s", diff)
	}
}
