package helm

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fluxcd/pkg/ssa/utils"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/helmrepo"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/tags"
)

// Options say how to render a unit's HelmReleases.
type Options struct {
	// Fetcher fetches charts; nil fetches them without a cache.
	Fetcher *Fetcher
	// Capabilities are the cluster's, as templates see them.
	Capabilities Capabilities
	// KubeVersion is the Kubernetes version templates see when there is
	// no cluster to ask (an offline diff; see OfflineCapabilities); empty
	// is Helm's default.
	KubeVersion string
	// Lookup reads a ConfigMap or Secret (data decoded) that is not among
	// the unit's objects: from the configuration, else the cluster. Nil
	// finds none.
	Lookup func(ctx context.Context, kind, namespace, name string) (map[string]string, bool, error)
	// LookupObject is the templates' lookup function: it reads the
	// cluster, read-only, as the unit's identity. Nil (an offline diff,
	// build) is Helm's client-side lookup, which finds nothing, as in
	// `helm template`. The values of Secrets it returns are masked like
	// values from Secrets.
	LookupObject ObjectLookup
	// Recorded are the releases the unit applied before, by Chart.Key:
	// a release not among them renders as an install; one whose chart or
	// values changed as an upgrade (.Release.IsUpgrade); one that did not
	// change as it rendered last time, as helm-controller leaves it be.
	Recorded map[string]Recorded
	// Sealed renders without keys (an offline diff): a valuesFrom key
	// that is still SOPS ciphertext is left out, and noted, rather than
	// read as values.
	Sealed bool
	// Checkout is the repository the unit is built from, where charts
	// kept in it are read; nil (or no Root) refuses them.
	Checkout *Checkout
	// Cluster, when set, says what the templates of rel see of the
	// cluster it is installed to, as the identity it is installed as
	// (spec.kubeConfig, spec.serviceAccountName): nil (as a nil func)
	// is Capabilities and LookupObject.
	Cluster func(ctx context.Context, rel *Release) (*View, error)
	// LineOf gives the line of an object in a file of the sources, for
	// the errors naming a HelmRelease (0: not known).
	LineOf func(file string, id object.ID) int
	// Sources finds a chart's source (a HelmRepository, an OCIRepository)
	// that the unit does not hold: declared anywhere in the configuration
	// (its files, any unit's build), as config read it. Sources are read,
	// never applied, so no order is added between the units. Nil finds
	// none.
	Sources func(kind, namespace, name string) *config.Source
	// Artifact resolves the ExternalArtifact a chartRef names to its
	// tree (made by its ArtifactGenerator, once per run), whose root is
	// the chart; nil refuses such charts.
	Artifact func(ctx context.Context, ref Reference) (GitTree, error)
	// Lockdown is helm-controller's multi-tenancy lockdown: a release's
	// chart in another namespace refused, a default service account.
	Lockdown Lockdown
	// ControllerNamespace is the namespace Flux runs in: a release there
	// naming helm-controller's own account is installed as the unit,
	// which stands in for the controller ("": none is).
	ControllerNamespace string
	// Offline is a rendering for an offline diff (a pull request's,
	// perhaps a fork's): a provider's login takes only the credentials
	// the environment names, never the runner's own identity (see
	// ecr.Options).
	Offline bool
}

// View is what a release's templates see of its cluster.
type View struct {
	Capabilities Capabilities
	LookupObject ObjectLookup
}

// Expanded is a unit's objects with its HelmReleases rendered.
type Expanded struct {
	// Objects are the unit's objects in order, each HelmRelease replaced by
	// its chart's objects, and the Flux sources (HelmRepository,
	// HelmChart, OCIRepository) left out: they are read, not applied.
	Objects []*unstructured.Unstructured
	// Sources are the files objects came from: a rendered object's is its
	// HelmRelease's.
	Sources map[object.ID]string
	// Charts say what each HelmRelease rendered.
	Charts []Chart
	// Secrets are the values that came from Secrets into charts' values;
	// SecretFields, the fields of rendered objects holding one (a template
	// may put a value anywhere).
	Secrets      []string
	SecretFields map[object.ID]*object.SecretFields
	// Notes are one line each about fields read but not acted on, and
	// objects read but not applied.
	Notes []string
}

// Chart is what one HelmRelease rendered.
type Chart struct {
	Release Reference
	// Source is the file the HelmRelease came from.
	Source                       string
	ReleaseName, Namespace       string
	Chart, Version, Digest, From string
	// Objects are the objects it rendered, in order.
	Objects []object.ID
	// Labels and Annotations are the HelmRelease's own: what notification
	// Alerts select its events by, and add to them.
	Labels, Annotations map[string]string
	// Hooks are its lifecycle hooks, in the order Helm runs them: not
	// among the unit's objects (they are created on an event of the
	// release, never applied or pruned with the rest).
	Hooks []Hook
	// ConfigDigest sums up what the release is made of (chart, values,
	// how it is rendered): a release whose digest did not change is not
	// upgraded, and runs no hooks, as helm-controller upgrades only a
	// release whose chart or values changed.
	ConfigDigest string
	// Upgrade says the chart rendered as an upgrade (.Release.IsUpgrade).
	Upgrade bool
	// LookedUp says its templates read the cluster (lookup): what they
	// render may change with it, whatever ConfigDigest says.
	LookedUp bool
	// DependsOn are the HelmReleases of spec.dependsOn; Level, how deep
	// the release sits in their graph within the unit: a release is
	// installed, and ready, before those of a higher level.
	DependsOn []Reference
	Level     int
	// Timeout is spec.timeout: how long each hook may take (zero: the
	// unit's timeout).
	Timeout time.Duration
	// ServiceAccountName and KubeConfig are the release's (see Release):
	// who installs it, and to which cluster.
	ServiceAccountName string
	KubeConfig         *KubeConfig
	// AccountField names where ServiceAccountName comes from, for
	// messages: spec.serviceAccountName, or the lockdown's default
	// (Lockdown.DefaultServiceAccount).
	AccountField string
	// StorageNamespace is where helm-controller keeps the release's
	// records (its HelmRelease's spec.storageNamespace, else namespace).
	StorageNamespace string
	// id is the HelmRelease's, as its file has it (for its line).
	id object.ID
	// DriftIgnore are spec.driftDetection.ignore's rules: while the
	// release is not upgraded, what changed at their paths in the
	// cluster is left alone (see KeepIgnoredDrift).
	DriftIgnore []IgnoreRule
	// HealthCheckExprs are spec.healthCheckExprs: how the kinds it
	// renders are judged when the unit waits for them.
	HealthCheckExprs []HealthCheckExpr
	// InstallRemediation and UpgradeRemediation say how a failed install or upgrade is
	// remediated; Test, whether its test hooks run (see Remediation).
	InstallRemediation, UpgradeRemediation Remediation
	Test                                   Tests
	// Tags are the HelmRelease's (tags.Annotation): a run may leave the
	// release out by them.
	Tags []string
}

// Recorded is what a unit recorded of a release it applied.
type Recorded struct {
	// Digest is its Chart.ConfigDigest; Upgraded, its Chart.Upgrade.
	Digest   string
	Upgraded bool
}

// Refuse is err of the release's HelmRelease, named with its file and
// line (lineOf, as Options.LineOf) first, as Expand names its own.
func (c Chart) Refuse(lineOf func(file string, id object.ID) int, err error) error {
	return atRelease(c.Release, c.id, c.Source, lineOf, err)
}

// Key names the release in a cluster: its namespace and name.
func (c Chart) Key() string { return c.Namespace + "/" + c.ReleaseName }

// sourceKinds are Flux source kinds a unit holds for its HelmReleases:
// read, never applied.
var sourceKinds = map[string]bool{"HelmRepository": true, "HelmChart": true, "OCIRepository": true}

// HasReleases reports whether objs hold a HelmRelease or a chart source:
// Expand has work to do.
func HasReleases(objs []*unstructured.Unstructured) bool {
	return slices.ContainsFunc(objs, func(u *unstructured.Unstructured) bool { return IsRelease(u) || isSource(u) })
}

func isSource(u *unstructured.Unstructured) bool {
	return u.GroupVersionKind().Group == SourceGroup && sourceKinds[u.GetKind()]
}

// Expand renders every HelmRelease among objs (sources maps each to its
// file) and returns the unit's objects with the charts' objects in their
// place. A release that cannot be rendered fails the whole unit, naming
// the HelmRelease, its file and what failed: nothing of the unit is
// applied.
func Expand(ctx context.Context, objs []*unstructured.Unstructured, sources map[object.ID]string, opts Options) (*Expanded, error) {
	if opts.Fetcher == nil {
		opts.Fetcher = &Fetcher{}
	}
	out := &Expanded{Sources: map[object.ID]string{}, SecretFields: map[object.ID]*object.SecretFields{}}
	var errs []error
	gitSources, chartSources := gitSourcesOf(objs), chartSourcesOf(objs)
	expanded := expandReleases(ctx, objs, sources, opts)
	for _, u := range objs {
		id := object.IDOf(u)
		switch {
		case isSource(u) && u.GetKind() == "OCIRepository" && !chartSources[Reference{Kind: u.GetKind(), Name: u.GetName(), Namespace: or(u.GetNamespace(), "default")}]:
			// No release's chart: an artifact of manifests, for the
			// Kustomizations naming it.
			out.Notes = append(out.Notes, fmt.Sprintf("%s/%s/%s (%s) is read, not applied: no HelmRelease of the unit takes its chart from it, it is a source of manifests, read by the Kustomizations naming it; the cluster needs no Flux source", u.GetKind(), u.GetNamespace(), u.GetName(), sources[id]))
		case isSource(u) || gitSources[Reference{Kind: u.GetKind(), Name: u.GetName(), Namespace: or(u.GetNamespace(), "default")}]:
			out.Notes = append(out.Notes, fmt.Sprintf("%s/%s/%s (%s) is read, not applied: charts are rendered here, the cluster needs no Flux source", u.GetKind(), u.GetNamespace(), u.GetName(), sources[id]))
		case IsRelease(u):
			e := expanded[u]
			rendered, chart, err := e.one, e.chart, e.err
			if err != nil {
				errs = append(errs, releaseError(u, sources[id], opts.LineOf, err))
				continue
			}
			out.Notes = append(out.Notes, rendered.notes...)
			for _, r := range rendered.objects {
				rid := object.IDOf(r)
				out.Objects = append(out.Objects, r)
				out.Sources[rid] = sources[id]
				chart.Objects = append(chart.Objects, rid)
			}
			chart.Source, chart.id = sources[id], id
			chart.Hooks = rendered.hooks
			out.Secrets = append(out.Secrets, rendered.secrets...)
			maps := secretFields(append(rendered.objects, hookObjects(rendered.hooks)...), rendered.secrets)
			for rid, f := range maps {
				out.SecretFields[rid] = f
			}
			out.Charts = append(out.Charts, *chart)
		default:
			out.Objects = append(out.Objects, u)
			out.Sources[id] = sources[id]
		}
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	notes, err := order(out.Charts, opts.LineOf)
	out.Notes = append(out.Notes, notes...)
	return out, err
}

// expansion is expandOne's answer for one release.
type expansion struct {
	one   *one
	chart *Chart
	err   error
}

// maxParallelReleases bounds the releases of a unit fetched and rendered
// at once: each may render up to MaxRenderedBytes.
const maxParallelReleases = 4

// expandReleases fetches and renders the unit's HelmReleases, several at
// a time (on as many CPUs as there are, up to maxParallelReleases): a
// unit's releases wait on their repositories and render on their own,
// and a run of the first deploy of a layout such as Flux's Helm example
// spends most of its build there. Releases of the same chart go one
// after another, so that the first fetches it and the others find it in
// the cache, as they did. Expand reads the answers in the unit's order.
func expandReleases(ctx context.Context, objs []*unstructured.Unstructured, sources map[object.ID]string, opts Options) map[*unstructured.Unstructured]*expansion {
	out := map[*unstructured.Unstructured]*expansion{}
	var order []string
	byChart := map[string][]*unstructured.Unstructured{}
	for _, u := range objs {
		if isSource(u) || !IsRelease(u) {
			continue
		}
		out[u] = &expansion{}
		key := chartKey(u)
		if byChart[key] == nil {
			order = append(order, key)
		}
		byChart[key] = append(byChart[key], u)
	}
	var g errgroup.Group
	g.SetLimit(max(1, min(runtime.GOMAXPROCS(0), maxParallelReleases)))
	for _, key := range order {
		g.Go(func() error {
			for _, u := range byChart[key] {
				e := out[u]
				e.one, e.chart, e.err = expandOne(ctx, u, objs, sources, opts)
			}
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// chartKey names the chart a HelmRelease renders (its source and name,
// or its chartRef); a release that does not read gets a key of its own.
func chartKey(u *unstructured.Unstructured) string {
	rel, err := ReadRelease(u)
	switch {
	case err != nil:
		return "release " + object.IDOf(u).String()
	case rel.Chart != nil:
		src := rel.Chart.SourceRef
		return fmt.Sprintf("chart %s/%s/%s %s", src.Kind, or(src.Namespace, rel.Namespace), src.Name, rel.Chart.Chart)
	case rel.ChartRef != nil:
		return fmt.Sprintf("chartRef %s/%s/%s", rel.ChartRef.Kind, or(rel.ChartRef.Namespace, rel.Namespace), rel.ChartRef.Name)
	}
	return "release " + object.IDOf(u).String()
}

// releaseError is err of the HelmRelease u, written in file: a
// build.FileError at its line (when lineOf finds it), so that front ends
// annotate it, whose message names the release and file:line first.
func releaseError(u *unstructured.Unstructured, file string, lineOf func(string, object.ID) int, err error) error {
	return atRelease(Reference{Kind: "HelmRelease", Namespace: or(u.GetNamespace(), "default"), Name: u.GetName()}, object.IDOf(u), file, lineOf, err)
}

// atRelease is err of HelmRelease rel (object id, in file), at its line:
// see releaseError.
func atRelease(rel Reference, id object.ID, file string, lineOf func(string, object.ID) int, err error) error {
	line := 0
	if lineOf != nil && file != "" {
		line = lineOf(file, id)
	}
	where := file
	if line > 0 {
		where = fmt.Sprintf("%s:%d", file, line)
	}
	err = fmt.Errorf("%s %s/%s (%s): %w", rel.Kind, rel.Namespace, rel.Name, where, err)
	if file == "" {
		return err
	}
	return &build.FileError{File: file, Line: line, Err: err}
}

// gitSourcesOf are the GitRepositories the HelmReleases among objs take
// their charts from: read, not applied, as the other sources.
func gitSourcesOf(objs []*unstructured.Unstructured) map[Reference]bool {
	out := map[Reference]bool{}
	for _, u := range objs {
		if !IsRelease(u) {
			continue
		}
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "chart", "spec", "sourceRef", "kind")
		name, _, _ := unstructured.NestedString(u.Object, "spec", "chart", "spec", "sourceRef", "name")
		ns, _, _ := unstructured.NestedString(u.Object, "spec", "chart", "spec", "sourceRef", "namespace")
		if kind == "GitRepository" {
			out[Reference{Kind: kind, Name: name, Namespace: or(ns, or(u.GetNamespace(), "default"))}] = true
		}
	}
	return out
}

// chartSourcesOf are the sources the HelmReleases among objs take their
// charts from: spec.chartRef, or spec.chart.spec.sourceRef.
func chartSourcesOf(objs []*unstructured.Unstructured) map[Reference]bool {
	out := map[Reference]bool{}
	for _, u := range objs {
		if !IsRelease(u) {
			continue
		}
		for _, path := range [][]string{{"spec", "chartRef"}, {"spec", "chart", "spec", "sourceRef"}} {
			ref, ok, _ := unstructured.NestedStringMap(u.Object, path...)
			if !ok {
				continue
			}
			ns := ref["namespace"]
			if ns == "" {
				ns = or(u.GetNamespace(), "default")
			}
			out[Reference{Kind: ref["kind"], Name: ref["name"], Namespace: ns}] = true
		}
	}
	return out
}

// one is one HelmRelease's rendering.
type one struct {
	objects []*unstructured.Unstructured
	hooks   []Hook
	secrets []string
	notes   []string
}

func expandOne(ctx context.Context, u *unstructured.Unstructured, objs []*unstructured.Unstructured, files map[object.ID]string, opts Options) (*one, *Chart, error) {
	rel, err := ReadRelease(u)
	if err != nil {
		return nil, nil, err
	}
	if rel.Suspend {
		return nil, nil, errors.New("spec.suspend: a suspended HelmRelease is not supported yet (rendering nothing would prune its objects): suspend the unit instead")
	}
	accountField := "spec.serviceAccountName"
	if rel.ServiceAccountName == "" && opts.Lockdown.DefaultServiceAccount != "" {
		accountField = "helm-controller's --default-service-account (" + opts.Lockdown.AccountAt + ")"
	}
	lockNotes, err := opts.Lockdown.lockDown(rel)
	if err != nil {
		return nil, nil, err
	}
	if note := ownAccount(rel, opts.ControllerNamespace); note != "" {
		lockNotes, accountField = append(lockNotes, note), ""
	}
	releaseTags, err := tags.Parse(u.GetAnnotations()[tags.Annotation])
	if err != nil {
		return nil, nil, fmt.Errorf("metadata.annotations[%s]: %w", tags.Annotation, err)
	}
	lookup := lookupIn(objs, opts.Lookup)
	if rel.ChartRef != nil && rel.ChartRef.Kind == "HelmChart" {
		// A HelmChart names its chart as spec.chart.spec would: the
		// release renders as if it were its spec.chart.
		spec, err := helmChartOf(*rel.ChartRef, objs, files, opts.Sources)
		if err != nil {
			return nil, nil, fmt.Errorf("spec.chartRef %s: %w", rel.ChartRef, err)
		}
		viaChart := *rel
		viaChart.ChartRef, viaChart.Chart = nil, spec
		rel = &viaChart
	}
	fetched, err := fetchChart(ctx, rel, objs, files, lookup, opts)
	if err != nil {
		return nil, nil, err
	}
	secrets := slices.Clone(fetched.secrets)
	chart := &Chart{Release: Reference{Kind: "HelmRelease", Name: rel.Name, Namespace: rel.Namespace}, ReleaseName: rel.ReleaseName, Namespace: rel.ReleaseNamespace,
		Chart: fetched.Chart.Name(), Version: fetched.Version, Digest: fetched.Digest, From: fetched.URL, Timeout: rel.Timeout, DriftIgnore: rel.DriftIgnore,
		ServiceAccountName: rel.ServiceAccountName, AccountField: accountField, KubeConfig: rel.KubeConfig, StorageNamespace: rel.StorageNamespace,
		HealthCheckExprs: rel.HealthCheckExprs, Labels: u.GetLabels(), Annotations: u.GetAnnotations(),
		InstallRemediation: rel.Install, UpgradeRemediation: rel.Upgrade, Test: rel.Test, Tags: releaseTags}
	notes := lockNotes
	if rel.Chart != nil {
		read := inChart(fetched.Chart)
		if rel.Chart.SourceRef.Kind == "GitRepository" {
			// As Flux has it: a Git source's values files are paths in
			// the repository, and its version is ignored.
			read = fetched.read
			if rel.Chart.Version != "" {
				notes = append(notes, fmt.Sprintf("HelmRelease %s/%s: spec.chart.spec.version %q is ignored for a chart kept in the repository, as Flux ignores it", rel.Namespace, rel.Name, rel.Chart.Version))
			}
		}
		if err := valuesFiles(fetched.Chart, rel.Chart.ValuesFiles, rel.Chart.IgnoreMissingValuesFiles, read); err != nil {
			return nil, nil, err
		}
	}
	vals, fromSecrets, sealedNotes, err := values(ctx, rel, lookup, opts.Sealed)
	if err != nil {
		return nil, nil, err
	}
	secrets = append(secrets, fromSecrets...)
	chart.ConfigDigest = configDigest(chart, rel, vals)
	chart.DependsOn = rel.DependsOn
	last, installed := opts.Recorded[chart.Key()]
	chart.Upgrade = installed && (last.Digest != chart.ConfigDigest || last.Upgraded)
	if installed {
		// Once installed, the chart's CRDs follow spec.upgrade.crds.
		upgraded := *rel
		upgraded.CRDs = rel.UpgradeCRDs
		rel = &upgraded
	}
	view := &View{Capabilities: opts.Capabilities, LookupObject: opts.LookupObject}
	if opts.Cluster != nil {
		v, err := opts.Cluster(ctx, rel)
		if err != nil {
			return nil, nil, err
		}
		if v != nil {
			view = v
		}
	}
	lookups := &templateLookup{read: view.LookupObject}
	rendered, err := render(ctx, rel, fetched.Chart, vals, view.Capabilities, chart.Upgrade, lookups)
	secrets = append(secrets, lookups.Secrets()...)
	chart.LookedUp = lookups.Used()
	if err != nil {
		return nil, nil, fmt.Errorf("chart %s %s does not render: %w", chart.Chart, fetched.Version, err)
	}
	notes = append(append(append(notes, rel.Notes...), sealedNotes...), fetched.Notes...)
	if n := hooksNotRun(rendered.Hooks); n != "" {
		notes = append(notes, fmt.Sprintf("chart %s %s: %s", chart.Chart, fetched.Version, n))
	}
	objects, err := postRender(ctx, rel, rendered.Objects)
	if err != nil {
		return nil, nil, fmt.Errorf("spec.postRenderers: %w", err)
	}
	if rel.CreateNamespace && !slices.ContainsFunc(objects, func(o *unstructured.Unstructured) bool {
		return utils.IsNamespace(o) && o.GetName() == rel.ReleaseNamespace
	}) {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(rel.ReleaseNamespace)
		objects = append([]*unstructured.Unstructured{ns}, objects...)
	}
	return &one{objects: objects, hooks: rendered.Hooks, secrets: secrets, notes: notes}, chart, nil
}

// fetched is a release's chart and the secrets reaching it took; read,
// for a chart from a GitRepository, reads a values file from the root of
// that repository's tree.
type fetched struct {
	*Fetched
	secrets []string
	read    func(name string) ([]byte, error)
}

// fetchChart fetches rel's chart from its source: a HelmRepository (HTTP
// or OCI) of spec.chart.spec, or the OCIRepository of spec.chartRef,
// found among the unit's objects, or a GitRepository: its chart is a
// directory of the checkout when it is this repository, else of the tree
// checkout.Repository resolves it to.
func fetchChart(ctx context.Context, rel *Release, objs []*unstructured.Unstructured, files map[object.ID]string, lookup lookupFunc, opts Options) (*fetched, error) {
	f, checkout := opts.Fetcher, opts.Checkout
	var src Reference
	if rel.ChartRef != nil {
		src = *rel.ChartRef
	} else {
		src = rel.Chart.SourceRef
	}
	field := "spec.chart.spec.sourceRef"
	if rel.ChartRef != nil {
		field = "spec.chartRef"
	}
	switch {
	case rel.ChartRef != nil && src.Kind == "ExternalArtifact" && opts.Artifact != nil:
		out, read, err := chartOfArtifact(ctx, f, opts.Artifact, src)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", field, src, err)
		}
		return &fetched{Fetched: out, read: read}, nil
	case rel.ChartRef != nil && src.Kind != "OCIRepository":
		return nil, fmt.Errorf("%s %s: charts from a %s are not supported yet (OCIRepository and HelmChart are)", field, src, src.Kind)
	case rel.ChartRef == nil && src.Kind == "GitRepository":
		ok, why := checkout.isThis(src, objs)
		if !ok && checkout != nil && checkout.Repository != nil {
			// Another repository: its tree, mapped or fetched.
			out, read, err := checkout.fetchFromRepository(ctx, f, src, rel.Chart.Chart)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", field, src, err)
			}
			return &fetched{Fetched: out, read: read}, nil
		}
		if !ok {
			return nil, fmt.Errorf("%s %s: %s", field, src, why)
		}
		out, err := checkout.fetchFromCheckout(ctx, f, rel.Chart.Chart)
		if err != nil {
			return nil, fmt.Errorf("%s %s (this repository): %w", field, src, err)
		}
		return &fetched{Fetched: out, read: checkout.readFile}, nil
	case rel.ChartRef == nil && src.Kind != "HelmRepository":
		return nil, fmt.Errorf("%s %s: charts from a %s are not supported yet (HelmRepository and GitRepository are)", field, src, src.Kind)
	}
	where := fmt.Sprintf("%s %s/%s", src.Kind, src.Namespace, src.Name)
	s, err := chartSource(src, objs, files, opts.Sources)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if src.Kind == "OCIRepository" {
		oci, err := helmrepo.OCISourceOf(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		creds, err := credentials(ctx, oci.Namespace, oci.SecretName, "", lookup)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if creds.Verify, err = readVerification(ctx, f, lookup, oci.Namespace, oci.Verify); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if creds, err = helmrepo.Login(ctx, f, oci.Provider, oci.URL, creds, opts.Offline); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out, err := f.FetchOCI(ctx, oci, creds, "", "")
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, oci.URL, err)
		}
		return &fetched{Fetched: out, secrets: creds.Secrets()}, nil
	}
	repo, err := helmrepo.RepositoryOf(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	creds, err := credentials(ctx, repo.Namespace, repo.SecretName, repo.CertSecretName, lookup)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if creds, err = helmrepo.Login(ctx, f, repo.Provider, repo.URL, creds, opts.Offline); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if v := rel.Chart.Verify; v != nil {
		if !repo.OCI {
			return nil, fmt.Errorf("spec.chart.spec.verify: %s is not of type oci: Flux verifies only charts from OCI registries", where)
		}
		// The Secret of chart.spec.verify is in the HelmRepository's
		// namespace, where helm-controller makes the HelmChart that
		// verifies it.
		if creds.Verify, err = readVerification(ctx, f, lookup, repo.Namespace, v); err != nil {
			return nil, fmt.Errorf("spec.chart.spec.verify: %w", err)
		}
	}
	var out *Fetched
	if repo.OCI {
		out, err = f.FetchOCI(ctx, &OCISource{Kind: "HelmRepository", Name: repo.Name, Namespace: repo.Namespace, URL: repo.URL, Insecure: repo.Insecure}, creds, rel.Chart.Chart, rel.Chart.Version)
	} else {
		out, err = f.Fetch(ctx, repo, creds, rel.Chart.Chart, rel.Chart.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", where, fetch.Redact(repo.URL), err)
	}
	return &fetched{Fetched: out, secrets: creds.Secrets()}, nil
}

// readVerification reads spec.verify of a chart source in namespace:
// a public key's Secret through lookup, or keyless against f's trust.
func readVerification(ctx context.Context, f *Fetcher, lookup func(ctx context.Context, kind, namespace, name string) (map[string]string, bool, error), namespace string, v *config.Verify) (*ocisource.Verification, error) {
	secrets := func(ctx context.Context, namespace, name string) (map[string]string, bool, error) {
		return lookup(ctx, "Secret", namespace, name)
	}
	return helmrepo.ReadVerification(ctx, secrets, namespace, v, f.Sigstore)
}

// chartOfArtifact loads the chart of the ExternalArtifact ref's tree (see
// Options.Artifact), confined to it as a chart of another repository is:
// at its root, or in its one directory, as a chart archive holds it.
func chartOfArtifact(ctx context.Context, f *Fetcher, artifact func(context.Context, Reference) (GitTree, error), ref Reference) (*Fetched, func(string) ([]byte, error), error) {
	tree, err := artifact(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	chartPath := "."
	if _, err := os.Stat(filepath.Join(tree.Dir, chartFile)); err != nil {
		if entries, _ := os.ReadDir(tree.Dir); len(entries) == 1 && entries[0].IsDir() {
			chartPath = entries[0].Name()
		}
	}
	c := &Checkout{Repository: func(context.Context, Reference) (GitTree, error) { return tree, nil }}
	return c.fetchFromRepository(ctx, f, ref, chartPath)
}

// helmChartOf is the chart the HelmChart ref names, as a HelmRelease's
// spec.chart.spec: its chart, version, source (in its namespace) and
// values files. A HelmChart of a Bucket, or with fields not honoured, is
// refused by name.
func helmChartOf(ref Reference, objs []*unstructured.Unstructured, files map[object.ID]string, sources func(kind, namespace, name string) *config.Source) (*ChartSpec, error) {
	s, err := chartSource(ref, objs, files, sources)
	if err != nil {
		return nil, err
	}
	c := s.Chart
	where := fmt.Sprintf("HelmChart %s/%s", s.Ref.Namespace, s.Ref.Name)
	switch {
	case c == nil || c.Chart == "":
		return nil, fmt.Errorf("%s: spec.chart: required", where)
	case len(c.Unsupported) > 0:
		return nil, fmt.Errorf("%s sets %s, which kustomize-deploy does not honour when it fetches a chart", where, strings.Join(c.Unsupported, ", "))
	case c.SourceKind != "HelmRepository" && c.SourceKind != "GitRepository":
		return nil, fmt.Errorf("%s: spec.sourceRef.kind %q: charts from a %s are not supported yet (HelmRepository and GitRepository are)", where, c.SourceKind, c.SourceKind)
	}
	return &ChartSpec{Chart: c.Chart, Version: c.Version, SourceRef: Reference{Kind: c.SourceKind, Name: c.SourceName, Namespace: s.Ref.Namespace},
		ValuesFiles: c.ValuesFiles, IgnoreMissingValuesFiles: c.IgnoreMissingValuesFiles}, nil
}

// chartSource is the chart source src names, read by config (the one
// reader of Flux sources): the unit's own object, else one declared
// anywhere in the configuration (sources).
func chartSource(src Reference, objs []*unstructured.Unstructured, files map[object.ID]string, sources func(kind, namespace, name string) *config.Source) (*config.Source, error) {
	u := find(objs, src.Kind, src.Namespace, src.Name)
	if u == nil {
		if sources != nil {
			if s := sources(src.Kind, src.Namespace, src.Name); s != nil {
				return s, nil
			}
		}
		return nil, fmt.Errorf("%s %s/%s is neither in the unit nor anywhere in the configuration", src.Kind, src.Namespace, src.Name)
	}
	set, err := config.ReadObjects([]config.Object{{File: files[object.IDOf(u)], Object: u.Object}})
	if err != nil {
		return nil, err
	}
	if len(set.Sources) != 1 {
		return nil, fmt.Errorf("%s %s/%s is not a source kustomize-deploy reads (its apiVersion %s)", src.Kind, src.Namespace, src.Name, u.GetAPIVersion())
	}
	return set.Sources[0], nil
}

// postRender applies the release's post-renderers (kustomize patches and
// images) and commonMetadata to objs, with kustomize, as helm-controller
// does.
func postRender(ctx context.Context, rel *Release, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if len(rel.PostRenderers) == 0 && len(rel.Labels)+len(rel.Annotations) == 0 {
		return objs, nil
	}
	data, err := object.ToYAML(objs)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kustomize-deploy-postrender-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "rendered.yaml"), []byte(data), 0o600); err != nil {
		return nil, err
	}
	// Each post-renderer applies to what the one before made.
	for i, pr := range rel.PostRenderers {
		bo := build.Options{Root: dir, Path: dir}
		for _, img := range pr.Images {
			bo.Images = append(bo.Images, build.Image{Name: img.Name, NewName: img.NewName, NewTag: img.NewTag, Digest: img.Digest})
		}
		for _, p := range pr.Patches {
			bp := build.Patch{Patch: p.Patch}
			if t := p.Target; t != nil {
				bp.Target = &build.Target{Group: t.Group, Version: t.Version, Kind: t.Kind, Name: t.Name, Namespace: t.Namespace,
					LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector}
			}
			bo.Patches = append(bo.Patches, bp)
		}
		if i == len(rel.PostRenderers)-1 {
			bo.Labels, bo.Annotations = rel.Labels, rel.Annotations
		}
		if objs, err = rebuild(ctx, bo, i < len(rel.PostRenderers)-1); err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
	}
	if len(rel.PostRenderers) == 0 {
		if objs, err = rebuild(ctx, build.Options{Root: dir, Path: dir, Labels: rel.Labels, Annotations: rel.Annotations}, false); err != nil {
			return nil, fmt.Errorf("commonMetadata: %w", err)
		}
	}
	return objs, nil
}

// rebuild builds bo's directory and, when next says another
// post-renderer follows, writes the result back for it (the last one's
// objects go on as they are, not through YAML once more).
func rebuild(ctx context.Context, bo build.Options, next bool) ([]*unstructured.Unstructured, error) {
	res, err := build.Build(ctx, bo)
	if err != nil {
		return nil, build.WithoutFiles(err) // files of a scratch directory, not the repository's
	}
	if !next {
		return res.Objects, nil
	}
	data, err := object.ToYAML(res.Objects)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		_ = os.Remove(filepath.Join(bo.Path, name))
	}
	return res.Objects, os.WriteFile(filepath.Join(bo.Path, "rendered.yaml"), []byte(data), 0o600)
}

// lookupIn finds ConfigMaps and Secrets among the unit's objects first,
// then through next.
func lookupIn(objs []*unstructured.Unstructured, next lookupFunc) lookupFunc {
	return func(ctx context.Context, kind, namespace, name string) (map[string]string, bool, error) {
		if u := find(objs, kind, namespace, name); u != nil {
			data, err := dataOf(u)
			return data, true, err
		}
		if next == nil {
			return nil, false, nil
		}
		return next(ctx, kind, namespace, name)
	}
}

// find is the object of kind named namespace/name among objs (core kinds
// and Flux sources; no namespace means "default").
func find(objs []*unstructured.Unstructured, kind, namespace, name string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name && or(u.GetNamespace(), "default") == namespace {
			return u
		}
	}
	return nil
}

// dataOf is a ConfigMap's data, or a Secret's data decoded with
// stringData laid over it, as the API server would store it.
func dataOf(u *unstructured.Unstructured) (map[string]string, error) {
	out := map[string]string{}
	data, _, _ := unstructured.NestedMap(u.Object, "data")
	for k, v := range data {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if u.GetKind() == "Secret" {
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("Secret %s/%s: data.%s is not base64", u.GetNamespace(), u.GetName(), k)
			}
			s = string(raw)
		}
		out[k] = s
	}
	if u.GetKind() == "Secret" {
		sd, _, _ := unstructured.NestedStringMap(u.Object, "stringData")
		for k, v := range sd {
			out[k] = v
		}
	}
	return out, nil
}

// lookupFunc reads a ConfigMap's or Secret's data, and says whether it
// exists.
type lookupFunc func(ctx context.Context, kind, namespace, name string) (map[string]string, bool, error)

// credentials reads a chart source's Secrets (helmrepo.ReadCredentials,
// the one credential model of sources) through lookup: the unit's
// objects, the configuration, the cluster.
func credentials(ctx context.Context, namespace, secretName, certSecretName string, lookup lookupFunc) (Credentials, error) {
	return helmrepo.ReadCredentials(ctx, func(ctx context.Context, namespace, name string) (map[string]string, bool, error) {
		return lookup(ctx, "Secret", namespace, name)
	}, namespace, secretName, certSecretName)
}

// secretFields records, per object, the string fields holding one of
// secrets (or its base64): a template may have put a value from a Secret
// anywhere, and diffs mask what is recorded.
func secretFields(objs []*unstructured.Unstructured, secrets []string) map[object.ID]*object.SecretFields {
	var forms []string
	for _, s := range secrets {
		if len(strings.TrimSpace(s)) < 4 { // as short as the log masker ignores
			continue
		}
		forms = append(forms, s, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	out := map[object.ID]*object.SecretFields{}
	if len(forms) == 0 {
		return out
	}
	for _, u := range objs {
		f := &object.SecretFields{}
		var walk func(path object.FieldPath, v any)
		walk = func(path object.FieldPath, v any) {
			switch t := v.(type) {
			case map[string]any:
				for k, e := range t {
					if slices.ContainsFunc(forms, func(s string) bool { return strings.Contains(k, s) }) {
						f.AddKey(append(slices.Clone(path), k))
					}
					walk(append(slices.Clone(path), k), e)
				}
			case []any:
				for i, e := range t {
					walk(append(slices.Clone(path), strconv.Itoa(i)), e)
				}
			case string:
				if slices.ContainsFunc(forms, func(s string) bool { return strings.Contains(t, s) }) {
					f.AddField(path)
				}
			}
		}
		walk(nil, u.Object)
		if !f.Empty() {
			out[object.IDOf(u)] = f
		}
	}
	return out
}
