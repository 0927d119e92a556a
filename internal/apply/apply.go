package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	"github.com/fluxcd/pkg/ssa/utils"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kdobject "github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Options tune DryRun (the plan) and Execute (the write of a plan).
type Options struct {
	// Force recreates objects whose immutable fields changed. Objects
	// annotated force: enabled are recreated regardless.
	Force bool
	// WaitTimeout bounds the wait for definitions (CRDs, Namespaces) and
	// classes to be ready before the next stage is applied.
	WaitTimeout time.Duration
	// Sources maps objects to the files they came from, for entries and errors.
	Sources map[kdobject.ID]string
	// Diffs makes DryRun render a unified diff per created or configured
	// object (Secret values masked); an apply does not need them.
	Diffs bool
	// SecretFields say, per object, where it holds values that came from
	// a secret (decrypted, or substituted from a Secret): diffs mask
	// them, and their live values, as Secret values are.
	SecretFields map[kdobject.ID]*kdobject.SecretFields
	// Secrets are the run's secret values: diffs mask a live value
	// holding one where the desired object does not say what the field
	// holds (see Secrets.Values).
	Secrets []string
	// Ignore are a Kustomization's spec.ignore rules: fields, by JSON
	// pointer, of the objects each selects, left as the cluster has them
	// (see ignoreRules).
	Ignore []jsondiff.IgnoreRule
	// StandIn, when set, gives for an object the manager to dry-run it
	// with when RBAC refuses its own identity the dry-run (nil: none):
	// its identity's rights come with the same apply (the unit creates
	// its ServiceAccount, Roles or bindings), and only the apply, as that
	// identity, can check them.
	StandIn Managers
	// Created are the Namespaces and kinds (group/kind) that something
	// run before (an earlier unit of the same diff) will create: DryRun
	// takes objects in them as it takes those of the build's own, created
	// and unverified.
	Created Created
}

// Managers gives the manager each object is applied with, which acts as
// one identity on one cluster: a unit's objects are applied as the unit,
// a HelmRelease's as its own (spec.serviceAccountName, spec.kubeConfig).
type Managers func(id kdobject.ID) *ssa.ResourceManager

// errNoManager is an object whose cluster could not be connected to.
var errNoManager = errors.New("no connection to the cluster it is applied to")

// One applies every object with m.
func One(m *ssa.ResourceManager) Managers {
	return func(kdobject.ID) *ssa.ResourceManager { return m }
}

// Created are Namespaces and kinds (group/kind, as a CRD defines them)
// that do not exist yet and will before the objects are applied.
type Created struct {
	Namespaces, Kinds map[string]bool
}

// applyOptions translates Options and the per-object annotations into
// ssa's selectors.
func applyOptions(opts Options) ssa.ApplyOptions {
	o := ssa.DefaultApplyOptions()
	o.Force = opts.Force
	o.ForceSelector = kdobject.Selector(kdobject.ForceKey, kdobject.Enabled)
	o.ExclusionSelector = kdobject.Selector(kdobject.SSAKey, kdobject.SSAIgnore)
	o.IfNotPresentSelector = kdobject.Selector(kdobject.SSAKey, kdobject.SSAIfNotPresent)
	if opts.WaitTimeout > 0 {
		o.WaitTimeout = opts.WaitTimeout
	}
	o.DriftIgnoreRules = ssaRules(opts.Ignore)
	o.Cleanup = ssa.ApplyCleanupOptions{
		// Take objects over from kubectl: drop its last-applied annotation
		// and its field managers so removed fields really go.
		Annotations:   takeoverAnnotations,
		FieldManagers: takeoverManagers,
		// ssa: Merge keeps other managers' fields.
		Exclusions: kdobject.Selector(kdobject.SSAKey, kdobject.SSAMerge),
	}
	return o
}

// stages splits objs by stage, keeping their order within a stage.
func stages(objs []*unstructured.Unstructured) map[result.Stage][]*unstructured.Unstructured {
	m := map[result.Stage][]*unstructured.Unstructured{}
	for _, o := range objs {
		s := result.StageOf(o)
		m[s] = append(m[s], o)
	}
	return m
}

// Outcome is what Execute did: one entry per step carried out (all of
// them unless it failed), and the resourceVersion each object had when it
// was last seen as desired (from the apply's response, or the dry-run that
// found it unchanged). Objects ssa's ApplyAll handled have none.
type Outcome struct {
	Entries          []result.Entry
	ResourceVersions map[kdobject.ID]string
	// AppliedAt is, for each object applied with one request, the time
	// the API server stamped on our field manager's entry (see Settled).
	AppliedAt map[kdobject.ID]time.Time
	// Current are the objects applied with one request that were ready
	// for good as the API server answered (see CurrentOnceApplied):
	// waiting for them could only confirm it.
	Current map[kdobject.ID]bool
}

// Add adds what o2 did to o, as if one Execute had done both.
func (o *Outcome) Add(o2 *Outcome) {
	if o2 == nil {
		return
	}
	o.Entries = append(o.Entries, o2.Entries...)
	maps.Copy(o.ResourceVersions, o2.ResourceVersions)
	maps.Copy(o.AppliedAt, o2.AppliedAt)
	if len(o2.Current) > 0 && o.Current == nil {
		o.Current = map[kdobject.ID]bool{}
	}
	maps.Copy(o.Current, o2.Current)
}

// Execute carries out a plan stage by stage: definitions (CRDs,
// Namespaces, ClusterRoles) first, waiting for the ones it wrote to be
// ready, then classes, then the rest. Created and configured objects are
// applied with one server-side apply each, several at a time; objects to
// recreate (immutable field changes, with force) or to take over from
// kubectl go through ssa's ApplyAll; unchanged and skipped objects are left
// alone. A stage waits only for what its answers did not show ready for
// good (see CurrentOnceApplied): a Namespace is Active once created. On
// error the outcome holds what was done so far, and the error names the
// object that failed and its source file.
func Execute(ctx context.Context, ms Managers, p *Plan, opts Options) (*Outcome, error) {
	out := &Outcome{ResourceVersions: map[kdobject.ID]string{}, AppliedAt: map[kdobject.ID]time.Time{}, Current: map[kdobject.ID]bool{}}
	for _, stage := range result.Stages {
		var steps []Step
		for _, s := range p.Steps {
			if s.Entry.Stage == stage {
				steps = append(steps, s)
			}
		}
		written, err := executeStage(ctx, ms, steps, opts, out)
		if err != nil {
			return out, err
		}
		if stage == result.StageResources || len(written) == 0 {
			continue
		}
		ao := applyOptions(opts)
		for m, set := range written { // each identity waits for what it wrote
			set = slices.DeleteFunc(slices.Clone(set), func(o object.ObjMetadata) bool { return out.Current[idOf(o)] })
			if len(set) == 0 {
				continue
			}
			if err := m.WaitForSetWithContext(ctx, set, ssa.WaitOptions{Interval: StageWaitInterval, Timeout: ao.WaitTimeout}); err != nil {
				return out, fmt.Errorf("%s stage not ready: %w", stage, err)
			}
		}
	}
	return out, nil
}

// executeStage applies one stage's steps and returns the objects it
// wrote, by the manager that wrote them.
func executeStage(ctx context.Context, ms Managers, steps []Step, opts Options, out *Outcome) (map[*ssa.ResourceManager]object.ObjMetadataSet, error) {
	entries := make([]result.Entry, len(steps))
	versions := make([]string, len(steps))
	at := make([]time.Time, len(steps))
	current := make([]bool, len(steps))
	done := make([]bool, len(steps))
	viaSSA := map[*ssa.ResourceManager][]*unstructured.Unstructured{}
	var order []*ssa.ResourceManager
	written := map[*ssa.ResourceManager]object.ObjMetadataSet{}
	for i, s := range steps {
		entries[i] = s.Entry
		entries[i].Diff = ""
		switch s.how {
		case nothing:
			versions[i], done[i] = s.ResourceVersion, true
		case applyAll:
			m := ms(s.Entry.Object)
			if viaSSA[m] == nil {
				order = append(order, m)
			}
			viaSSA[m] = append(viaSSA[m], s.Object)
		}
	}

	// Single applies, several in flight, workloads early (sendOrder); the
	// first failure stops the rest.
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for _, i := range sendOrder(steps) {
		s := steps[i]
		if s.how != patch {
			continue
		}
		if gctx.Err() != nil {
			break
		}
		m := ms(s.Entry.Object)
		g.Go(func() error {
			rv, when, now, err := applyOne(gctx, m, s.Object)
			if err != nil && gctx.Err() != nil && errors.Is(err, context.Canceled) {
				return nil // stopped by the first failure, not failed itself
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				oe := &ObjectError{Object: s.Entry.Object, Source: s.Entry.Source, Err: err}
				entries[i].Action, entries[i].Reason, done[i] = result.Failed, oe.Cause(), true
				entries[i].Recreate = oe.Immutable()
				return oe
			}
			versions[i], at[i], current[i], done[i] = rv, when, now, true
			written[m] = append(written[m], object.UnstructuredToObjMetadata(s.Object))
			return nil
		})
	}
	firstErr := g.Wait()

	for _, m := range order {
		if firstErr != nil {
			break
		}
		if m == nil {
			firstErr = errNoManager
			break
		}
		cs, err := m.ApplyAll(ctx, viaSSA[m], applyOptions(opts))
		if cs != nil {
			actions := map[kdobject.ID]result.Action{}
			for _, e := range cs.Entries {
				actions[idOf(e.ObjMetadata)] = result.Action(e.Action)
			}
			for i, s := range steps {
				if a, ok := actions[s.Entry.Object]; ok && s.how == applyAll {
					entries[i].Action, done[i] = a, true
				}
			}
			written[m] = append(written[m], cs.ToObjMetadataSet()...)
		}
		if err != nil {
			firstErr = explain(err, viaSSA[m], opts.Sources)
		}
	}
	for i := range steps {
		if done[i] {
			out.Entries = append(out.Entries, entries[i])
			if versions[i] != "" {
				out.ResourceVersions[entries[i].Object] = versions[i]
			}
			if !at[i].IsZero() {
				out.AppliedAt[entries[i].Object] = at[i]
			}
			if current[i] {
				out.Current[entries[i].Object] = true
			}
		}
	}
	return written, firstErr
}

// applyOne server-side applies u as ssa does (our field manager, taking
// fields over from other managers) and returns the resourceVersion the
// object has now, the time stamped on our managed-fields entry, and
// whether the answer shows it ready for good (CurrentOnceApplied).
func applyOne(ctx context.Context, m *ssa.ResourceManager, u *unstructured.Unstructured) (string, time.Time, bool, error) {
	if m == nil {
		return "", time.Time{}, false, errNoManager
	}
	obj := u.DeepCopy()
	utils.RemoveCABundleFromCRD(obj)
	// A kind whose CRD the previous stage established may not be in the
	// API server's discovery yet (it is updated asynchronously): the
	// mapper re-discovers on every try, for a few seconds.
	var err error
	for wait := noMatchRetry; ; wait *= 2 {
		err = m.Client().Patch(ctx, obj, client.Apply, client.ForceOwnership, client.FieldOwner(FieldManager))
		if !meta.IsNoMatchError(err) || wait > noMatchRetryMax {
			break
		}
		select {
		case <-ctx.Done():
			return "", time.Time{}, false, fmt.Errorf("apply failed: %w", err)
		case <-time.After(wait):
		}
	}
	if err != nil {
		return "", time.Time{}, false, fmt.Errorf("apply failed: %w", err)
	}
	var at time.Time
	for _, e := range obj.GetManagedFields() {
		if e.Manager == FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" && e.Time != nil {
			at = e.Time.Time
		}
	}
	return obj.GetResourceVersion(), at, CurrentOnceApplied(obj), nil
}

// StageWaitInterval is how often a stage's wait (for the CRDs it
// created to be established, before the objects of their kinds are
// applied) reads their status. A CRD is established a few tens of
// milliseconds after it is created, seldom by the answer to its apply:
// polled every second, a first deploy with a CRD waited most of a second
// for nothing.
const StageWaitInterval = 250 * time.Millisecond

// noMatchRetry is the first wait before applying an object of a kind
// discovery does not know again; waits double up to noMatchRetryMax
// (about 6 s in all).
const (
	noMatchRetry    = 100 * time.Millisecond
	noMatchRetryMax = 3 * time.Second
)

func idOf(m object.ObjMetadata) kdobject.ID {
	return kdobject.ID{Group: m.GroupKind.Group, Kind: m.GroupKind.Kind, Namespace: m.Namespace, Name: m.Name}
}
