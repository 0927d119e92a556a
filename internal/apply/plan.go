package apply

import (
	"context"
	"sort"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Plan is what an apply will do to each object, worked out with
// server-side dry-runs and in the order it will be done: stage by stage,
// and within a stage in ssa's kind order.
type Plan struct {
	Steps []Step
}

// Step is one object's part of a plan.
type Step struct {
	Object *unstructured.Unstructured
	// Entry is the outcome the dry-run predicts; its Diff is set only when
	// Options.Diffs asked for it.
	Entry result.Entry
	// ResourceVersion is the live object's when the dry-run found it
	// already as desired; empty otherwise.
	ResourceVersion string
	// Unverified steps could not be dry-run: their Namespace or kind is
	// created by the same build and does not exist yet.
	Unverified bool
	// StoodIn says the dry-run was made as Options.StandIn's identity:
	// the object's own was refused by RBAC, and its rights come with the
	// apply. Only the apply, as the object's identity, checks them.
	StoodIn bool
	// Live and Merged, when Options.Diffs asked for diffs, are the object
	// as the cluster holds it, managedFields included (nil: it does not
	// exist), and as the dry-run says it would be once applied.
	Live, Merged *unstructured.Unstructured
	// Kept are the ignored paths (Options.Ignore) at which Object was
	// given the live values, or left without the field, before applying.
	Kept []string
	how  method
}

// method is how a step is carried out.
type method int

const (
	nothing  method = iota // unchanged or skipped
	patch                  // one server-side apply request
	applyAll               // ssa's ApplyAll: recreate on immutable changes, take over from kubectl
)

// Entries returns the predicted outcome of every step, in plan order; a
// nil plan has none.
func (p *Plan) Entries() []result.Entry {
	if p == nil {
		return nil
	}
	out := make([]result.Entry, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.Entry
	}
	return out
}

// Unverified returns the objects no dry-run could check.
func (p *Plan) Unverified() []*unstructured.Unstructured {
	if p == nil {
		return nil
	}
	var out []*unstructured.Unstructured
	for _, s := range p.Steps {
		if s.Unverified {
			out = append(out, s.Object)
		}
	}
	return out
}

// DryRun works out, without writing anything, what Execute would do to each
// object: each is dry-run with a server-side apply, definitions first, so
// objects in a Namespace (or of a kind) that the same build creates, or
// that opts.Created says will exist, and that does not exist yet are not
// sent at all (the API server would only wait and answer NotFound); they
// count as created, unverified. Failures
// are entries too (action failed); the returned error joins them.
func DryRun(ctx context.Context, ms Managers, objs []*unstructured.Unstructured, opts Options) (*Plan, error) {
	ignore, err := compileIgnore(opts.Ignore)
	if err != nil {
		return nil, err
	}
	runners := map[*ssa.ResourceManager]*dryRunner{}
	runner := func(m *ssa.ResourceManager) *dryRunner {
		if m == nil {
			return nil
		}
		if runners[m] == nil {
			obs := newObserver(m.Client())
			obs.ignore = ignore
			runners[m] = &dryRunner{obs: obs, dm: ssa.NewResourceManager(obs, nil, ssa.Owner{Field: FieldManager, Group: OwnerGroup})}
		}
		return runners[m]
	}
	do := ssa.DiffOptions{
		Exclusions:           object.Selector(object.SSAKey, object.SSAIgnore),
		IfNotPresentSelector: object.Selector(object.SSAKey, object.SSAIfNotPresent),
		Force:                opts.Force,
		ForceSelector:        object.Selector(object.ForceKey, object.Enabled),
		DriftIgnoreRules:     ssaRules(opts.Ignore),
	}
	p := &Plan{}
	var errs []error
	missing := missingPrerequisites{namespaces: map[string]bool{}, kinds: map[string]bool{}}
	inBuild := newBuildIndex(objs)
	for ns := range opts.Created.Namespaces {
		missing.namespaces[ns], inBuild.namespaces[ns] = true, true
	}
	for k := range opts.Created.Kinds {
		missing.kinds[k], inBuild.kinds[k] = true, true
	}
	show := differOf(opts)
	byStage := stages(objs)
	for _, stage := range result.Stages {
		batch := byStage[stage]
		sort.Sort(ssa.SortableUnstructureds(batch))
		steps := make([]Step, len(batch))
		stepErrs := make([]error, len(batch))
		var g errgroup.Group
		g.SetLimit(concurrency)
		for i, u := range batch {
			id := object.IDOf(u)
			steps[i] = Step{Object: u, Entry: result.Entry{Object: id, Version: u.GetAPIVersion(), Source: opts.Sources[id], Stage: stage}}
			if missing.has(u) {
				steps[i].created(show)
				steps[i].Unverified = true
				continue
			}
			as, standIn := runner(ms(id)), (*dryRunner)(nil)
			if opts.StandIn != nil {
				standIn = runner(opts.StandIn(id))
			}
			g.Go(func() error {
				stepErrs[i] = dryRunOne(ctx, as, standIn, &steps[i], do, inBuild, show)
				return nil // every failure is reported, not just the first
			})
		}
		_ = g.Wait()
		for i := range steps {
			missing.note(&steps[i])
		}
		p.Steps = append(p.Steps, steps...)
		errs = append(errs, stepErrs...)
	}
	return p, joinObjectErrors(errs)
}

// concurrency bounds the requests in flight, dry-runs and applies alike;
// the client's rate limit still applies on top.
const concurrency = 8

// dryRunner dry-runs as one identity, observing what it reads.
type dryRunner struct {
	obs *observer
	dm  *ssa.ResourceManager
}

// dryRunOne dry-runs s as its identity (as), or, when RBAC refuses that
// and standIn is set, as standIn.
func dryRunOne(ctx context.Context, as, standIn *dryRunner, s *Step, do ssa.DiffOptions, inBuild buildIndex, show differ) error {
	u := s.Object
	if as == nil {
		oe := &ObjectError{Object: s.Entry.Object, Source: s.Entry.Source, Err: errNoManager}
		s.Entry.Action, s.Entry.Reason = result.Failed, oe.Cause()
		return oe
	}
	cse, live, merged, err := as.dm.Diff(ctx, u.DeepCopy(), do)
	obs := as.obs
	if err != nil && standIn != nil && rbacForbidden(err) {
		if c, l, m, serr := standIn.dm.Diff(ctx, u.DeepCopy(), do); serr == nil {
			cse, live, merged, err, obs, s.StoodIn = c, l, m, nil, standIn.obs, true
		}
	}
	switch {
	case err != nil && inBuild.createsPrerequisite(u, err):
		s.created(show)
		s.Unverified = true
		return nil
	case err != nil:
		oe := &ObjectError{Object: s.Entry.Object, Source: s.Entry.Source, Err: err}
		s.Entry.Action, s.Entry.Reason = result.Failed, oe.Cause()
		s.Entry.Recreate = oe.Immutable()
		return oe
	}
	ob := obs.get(s.Entry.Object)
	if show != nil {
		s.Live, s.Merged = live, merged
		if live != nil && len(live.GetManagedFields()) == 0 {
			s.Live = live.DeepCopy()
			s.Live.SetManagedFields(ob.managed)
		}
	}
	takeover := ob.takeover && !utils.AnyInMetadata(u, object.Selector(object.SSAKey, object.SSAMerge))
	s.Entry.Action = result.Action(cse.Action)
	if takeover && ob.helmRelease != "" {
		s.Entry.Reason = takenOverPrefix + ob.helmRelease
	}
	switch s.Entry.Action {
	case result.Created:
		s.created(show)
		if ob.exists { // an immutable field changed: recreate, with --force
			s.how = applyAll
		}
	case result.Configured:
		s.how = patch
		if takeover {
			s.how = applyAll
		}
		if ob.live != nil {
			// Sent with the cluster's values at the ignored paths, so
			// the apply does not revert them (see ignoreRules).
			s.Object, s.Kept = keepIgnored(u, ob.live, obs.ignore.paths(u))
		}
		if show != nil {
			s.Entry.Diff = show(s, live, merged)
		}
	case result.Unchanged:
		s.ResourceVersion = ob.dryRunVersion
		if takeover {
			s.how, s.ResourceVersion = applyAll, ""
		}
	}
	return nil
}

func (s *Step) created(show differ) {
	s.Entry.Action, s.how = result.Created, patch
	if show != nil {
		s.Entry.Diff = show(s, nil, s.Object)
	}
}

// differ renders the diff of a step's object; nil when no diffs are
// asked for. after is what the API server makes of the step's object.
type differ func(s *Step, before, after *unstructured.Unstructured) string

// differOf is the differ opts ask for. The fields recorded as secret on
// the desired object are found again in what the server makes of it.
func differOf(opts Options) differ {
	if !opts.Diffs {
		return nil
	}
	return func(s *Step, before, after *unstructured.Unstructured) string {
		fields := diff.FieldsOn(opts.SecretFields[s.Entry.Object], s.Object, after)
		return diff.Unified(s.Entry.Object, before, after, diff.Secrets{Fields: fields, Values: opts.Secrets})
	}
}

// missingPrerequisites are the Namespaces and kinds the plan will create.
type missingPrerequisites struct {
	namespaces map[string]bool
	kinds      map[string]bool // group/kind
}

func (mp missingPrerequisites) note(s *Step) {
	if s.Entry.Action != result.Created || s.how == applyAll {
		return
	}
	u := s.Object
	switch {
	case utils.IsNamespace(u):
		mp.namespaces[u.GetName()] = true
	case utils.IsCRD(u):
		mp.kinds[crdKind(u)] = true
	}
}

func (mp missingPrerequisites) has(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return mp.kinds[gvk.Group+"/"+gvk.Kind] || (u.GetNamespace() != "" && mp.namespaces[u.GetNamespace()])
}

func crdKind(u *unstructured.Unstructured) string {
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	return group + "/" + kind
}

// SplitAt splits p into the steps of the stages before s and those of s
// and after, each in p's order: what runs before a Helm release's
// pre-install hooks, and what after.
func (p *Plan) SplitAt(s result.Stage) (before, rest *Plan) {
	before, rest = &Plan{}, &Plan{}
	for _, st := range p.Steps {
		if st.Entry.Stage.Order() < s.Order() {
			before.Steps = append(before.Steps, st)
		} else {
			rest.Steps = append(rest.Steps, st)
		}
	}
	return before, rest
}
