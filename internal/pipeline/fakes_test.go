package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/hooks"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// The fakes below stand in for the cluster: they keep what was written
// and what was asked, so the tests can check a run's rules.

// fakeStore keeps inventories by namespace/name and every write.
type fakeStore struct {
	mu      sync.Mutex
	invs    map[string]*inventory.Inventory
	writes  []*inventory.Inventory
	deleted []string
	loadErr error
	loads   int
	// saveErr fails the write with this number (1 is the first).
	saveErr   error
	saveErrAt int
	// merged, when set, is an entry another writer recorded: the first
	// write conflicts and is merged with it, as inventory.Save does.
	merged *inventory.Entry
}

func newStore(invs ...*inventory.Inventory) *fakeStore {
	s := &fakeStore{invs: map[string]*inventory.Inventory{}}
	for _, inv := range invs {
		s.invs[inv.Namespace+"/"+inv.Name] = inv
	}
	return s
}

func (s *fakeStore) Load(_ context.Context, namespace, name string) (*inventory.Inventory, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads++
	if s.loadErr != nil {
		return nil, s.loadErr
	}
	return s.invs[namespace+"/"+name], nil
}

func (s *fakeStore) Save(_ context.Context, inv *inventory.Inventory) (*inventory.Inventory, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saveErr != nil && len(s.writes)+1 == s.saveErrAt {
		s.saveErrAt = 0 // fail once
		return nil, s.saveErr
	}
	c := *inv
	c.Entries = slices.Clone(inv.Entries)
	if s.merged != nil {
		c.Entries = inventory.Union(c.Entries, []inventory.Entry{*s.merged})
		s.merged = nil
	}
	c.ResourceVersion = fmt.Sprint(len(s.writes) + 1)
	s.writes = append(s.writes, &c)
	s.invs[inv.Namespace+"/"+inv.Name] = &c
	return &c, nil
}

func (s *fakeStore) Delete(_ context.Context, namespace, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.invs, namespace+"/"+name)
	s.deleted = append(s.deleted, namespace+"/"+name)
	return nil
}

// current is the inventory the store holds now.
func (s *fakeStore) current(name string) *inventory.Inventory {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.invs["deploy/"+name]
}

// fakeApplier plans every object as created (or as dryRunErr says), and
// applies a plan by giving each object resourceVersion "rv-<name>".
type fakeApplier struct {
	store *fakeStore
	// unchanged objects are planned as such, the rest as created.
	unchanged map[object.ID]bool
	// reasons are the reasons the plan gives objects (taken over...).
	reasons   map[object.ID]string
	dryRunErr error
	// firstDryRunErr fails the first dry-run only.
	firstDryRunErr error
	dryRuns        int
	executeErr     error
	unmoved        map[object.ID]string
	unmovedAsked   int
	settled        map[object.ID]string

	dryRun []object.ID
	// log, when set, records each Execute, with the objects it applied.
	log *callLog
	// executed is nil until Execute runs; atExecute is the inventory the
	// cluster held then.
	executed  []object.ID
	atExecute *inventory.Inventory
}

func (a *fakeApplier) DryRun(_ context.Context, objs []*unstructured.Unstructured, opts apply.Options) (*apply.Plan, error) {
	a.dryRuns++
	err := a.dryRunErr
	if a.dryRuns == 1 && a.firstDryRunErr != nil {
		err = a.firstDryRunErr
	}
	p := &apply.Plan{}
	for _, u := range objs {
		id := object.IDOf(u)
		a.dryRun = append(a.dryRun, id)
		e := result.Entry{Object: id, Version: u.GetAPIVersion(), Source: opts.Sources[id], Stage: result.StageOf(u), Action: result.Created}
		if a.unchanged[id] {
			e.Action = result.Unchanged
		}
		e.Reason = a.reasons[id]
		if err != nil {
			e.Action, e.Reason = result.Failed, err.Error()
		}
		p.Steps = append(p.Steps, apply.Step{Object: u, Entry: e})
	}
	return p, err
}

func (a *fakeApplier) Execute(_ context.Context, p *apply.Plan, _ apply.Options) (*apply.Outcome, error) {
	if a.executed == nil {
		a.atExecute = a.store.current("web")
		a.executed = []object.ID{}
	}
	out := &apply.Outcome{ResourceVersions: map[object.ID]string{}, AppliedAt: map[object.ID]time.Time{}}
	if a.executeErr != nil {
		return out, a.executeErr
	}
	var applied []string
	for _, s := range p.Steps {
		applied = append(applied, s.Entry.Object.Name)
	}
	a.log.add("apply " + strings.Join(applied, ","))
	for _, s := range p.Steps {
		a.executed = append(a.executed, s.Entry.Object)
		out.Entries = append(out.Entries, s.Entry)
		out.ResourceVersions[s.Entry.Object] = "rv-" + s.Entry.Object.Name
		out.AppliedAt[s.Entry.Object] = appliedAt
	}
	return out, nil
}

func (a *fakeApplier) Unmoved(_ context.Context, recs []apply.Recorded) (map[object.ID]string, error) {
	a.unmovedAsked++
	out := map[object.ID]string{}
	for _, r := range recs {
		if rv, ok := a.unmoved[r.ID]; ok && rv == r.ResourceVersion {
			out[r.ID] = rv
		}
	}
	return out, nil
}

func (a *fakeApplier) Settled(_ context.Context, applied []apply.Applied) (map[object.ID]string, error) {
	out := map[object.ID]string{}
	for _, ap := range applied {
		if rv, ok := a.settled[ap.ID]; ok && (ap.Ready == "" || ap.Ready == rv) { // as apply.Settled
			out[ap.ID] = rv
		}
	}
	return out, nil
}

// fakePruner deletes every candidate but those in fail (kept, failed)
// and keep (kept, skipped).
type fakePruner struct {
	fail, keep map[object.ID]bool
	err        error
	calls      [][]object.ID
	dryRun     []bool
	waitedGone bool
	goneErr    error
	// gone are the entries WaitGone was asked about.
	gone []object.ID
}

func (p *fakePruner) Prune(ctx context.Context, candidates []inventory.Entry, dryRun bool) (*prune.Outcome, error) {
	var ids []object.ID
	out := &prune.Outcome{}
	for _, c := range candidates {
		ids = append(ids, c.ID)
		e := result.Entry{Object: c.ID, Version: c.Version, Stage: result.StagePrune, Action: result.Deleted}
		switch {
		case p.fail[c.ID]:
			e.Action, e.Reason = result.Failed, "forbidden"
			out.Keep = append(out.Keep, c)
		case p.keep[c.ID]:
			e.Action, e.Reason = result.Skipped, "namespace still holds objects"
			out.Keep = append(out.Keep, c)
		}
		out.Entries = append(out.Entries, e)
	}
	p.calls = append(p.calls, ids)
	p.dryRun = append(p.dryRun, dryRun)
	return out, p.err
}

func (p *fakePruner) WaitGone(_ context.Context, entries []inventory.Entry, _ time.Duration) error {
	p.waitedGone = true
	for _, e := range entries {
		p.gone = append(p.gone, e.ID)
	}
	return p.goneErr
}

type fakeWaiter struct {
	err    error
	waited []object.ID
	called bool
	log    *callLog
	opts   health.Options
	// observed is the version each object is found ready at; one not in
	// it is found ready at "rv-ready".
	observed health.Observed
}

func (w *fakeWaiter) Wait(_ context.Context, ids []object.ID, opts health.Options) (health.Observed, error) {
	w.log.add("wait")
	w.called, w.waited, w.opts = true, ids, opts
	if w.err != nil {
		return nil, w.err
	}
	seen := health.Observed{}
	for _, id := range ids {
		seen[id] = "rv-ready"
		if rv, ok := w.observed[id]; ok {
			seen[id] = rv
		}
	}
	return seen, nil
}

// fakeRecords records which Helm releases' records were removed.
type fakeRecords struct {
	removed []string
	err     error
}

func (r *fakeRecords) Remove(_ context.Context, _ object.ID, namespace, name string) ([]string, error) {
	r.removed = append(r.removed, namespace+"/"+name)
	return []string{"Secret/sh.helm.release.v1." + name + ".v1"}, r.err
}

// callLog records calls to the fakes sharing it, in order; a nil log
// records nothing.
type callLog struct{ calls []string }

func (l *callLog) add(call string) {
	if l != nil {
		l.calls = append(l.calls, call)
	}
}

// fakeHooks records the hooks checked and run, failing as told.
type fakeHooks struct {
	log      *callLog
	checkErr error
	failOn   string // an event whose hooks fail
}

func (h *fakeHooks) Check(_ context.Context, rel hooks.Release, events ...string) error {
	h.log.add("check " + rel.Name + " " + strings.Join(events, ","))
	return h.checkErr
}

func (h *fakeHooks) Run(_ context.Context, event string, rel hooks.Release, _ hooks.Options) ([]result.Entry, error) {
	var out []result.Entry
	for _, k := range rel.Hooks {
		if !k.On(event) {
			continue
		}
		if len(out) == 0 {
			h.log.add(event + " " + rel.Name)
		}
		e := result.Entry{Object: object.IDOf(k.Object), Stage: result.StageHooks, Action: result.Created}
		if event == h.failOn {
			e.Action = result.Failed
			return append(out, e), errBoom
		}
		out = append(out, e)
	}
	return out, nil
}

// fakeScopes knows Namespaces, ClusterRoles and CRDs as cluster-scoped
// and ConfigMaps, Secrets, Deployments and Services as namespaced, all of
// them v1.
type fakeScopes struct{}

func (s fakeScopes) Serves(gk schema.GroupKind) ([]string, error) {
	if _, known := s.Namespaced(gk); known {
		return []string{"v1"}, nil
	}
	return nil, nil
}

func (fakeScopes) Namespaced(gk schema.GroupKind) (bool, bool) {
	switch gk.String() {
	case "Namespace", "ClusterRole.rbac.authorization.k8s.io", "CustomResourceDefinition.apiextensions.k8s.io":
		return false, true
	case "ConfigMap", "Secret", "Service", "Deployment.apps":
		return true, true
	}
	return false, false
}

// fakeLocker records the locks taken and given back.
type fakeLocker struct {
	err            error
	taken, release int
	// lose, when set, ends the lock's context with this cause.
	lose error
	// onLock, when set, runs as the lock is taken (before it is held): a
	// run that held it before.
	onLock func()
}

func (l *fakeLocker) Lock(ctx context.Context, _, _ string) (context.Context, func(), error) {
	if l.onLock != nil {
		l.onLock()
	}
	if l.err != nil {
		return nil, nil, l.err
	}
	l.taken++
	held, cancel := context.WithCancelCause(ctx)
	if l.lose != nil {
		cancel(l.lose)
	}
	return held, func() { l.release++; cancel(nil) }, nil
}

// fixture is one run against fakes.
type fixture struct {
	t       *testing.T
	locker  *fakeLocker
	store   *fakeStore
	applier *fakeApplier
	pruner  *fakePruner
	waiter  *fakeWaiter
	hooks   *fakeHooks
	records *fakeRecords
	objs    []*unstructured.Unstructured
	// charts are the releases the build rendered, as helm.Expand says.
	charts []helm.Chart
	// inputs, when set, are what the build read.
	inputs *build.Inputs
	// health are the releases' health expressions, as rendering parses
	// them.
	health health.Evaluators
	// renderErr fails the build; rendered counts builds; renderHook sees
	// the options of each.
	renderErr  error
	rendered   int
	renderHook func(Options)
	// baseRoot and baseObjs: a render of the directory baseRoot (a pull
	// request's base, through Options.At) gives baseObjs.
	baseRoot string
	baseObjs []*unstructured.Unstructured
}

func newFixture(t *testing.T, last *inventory.Inventory, objs ...*unstructured.Unstructured) *fixture {
	f := &fixture{t: t, locker: &fakeLocker{}, pruner: &fakePruner{}, waiter: &fakeWaiter{}, hooks: &fakeHooks{}, records: &fakeRecords{}, objs: objs}
	if last != nil {
		f.store = newStore(last)
	} else {
		f.store = newStore()
	}
	f.applier = &fakeApplier{store: f.store}
	return f
}

// run runs mode with opts on the fakes, as Apply, Diff and Delete do
// after connecting.
func (f *fixture) run(mode result.Mode, opts Options) (*result.Result, error) {
	f.t.Helper()
	opts.Name, opts.Revision = "web", "rev-2"
	opts.Dir = paths.Dir{Root: f.t.TempDir(), Rel: "."}
	r := newRun(opts, mode)
	r.ns, r.objNS = "deploy", "apps"
	r.owner = apply.OwnerLabels(opts.Name, r.ns)
	r.render = func(_ context.Context, o Options) (*Rendered, error) {
		f.rendered++
		if f.renderHook != nil {
			f.renderHook(o)
		}
		if f.renderErr != nil {
			return nil, f.renderErr
		}
		out := &Rendered{Sources: map[object.ID]string{}, Charts: f.charts, Health: f.health}
		if f.inputs != nil {
			out.Inputs = *f.inputs
		}
		objs := f.objs
		if f.baseRoot != "" && o.Dir.Root == f.baseRoot {
			objs = f.baseObjs
		}
		for _, u := range objs {
			c := u.DeepCopy()
			out.Objects = append(out.Objects, c)
			out.Sources[object.IDOf(c)] = c.GetName() + ".yaml"
		}
		return out, nil
	}
	cl := cluster{store: f.store, locker: f.locker, applier: f.applier, pruner: f.pruner, waiter: f.waiter, scopes: fakeScopes{}, hooks: f.hooks, records: f.records}
	if mode == result.ModeApply {
		r.cl = cl
		return r.applyUnit(context.Background())
	}
	r, ctx, err := r.begin(context.Background(), cl)
	defer r.end()
	if err != nil {
		return r.fail(ctx, err)
	}
	if res, skip := r.skipped(); skip {
		return res, nil
	}
	switch mode {
	case result.ModeDiff:
		return r.diff(ctx)
	case result.ModeDelete:
		return r.delete(ctx)
	}
	return nil, fmt.Errorf("mode %s", mode)
}

func obj(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func configMap(name string) *unstructured.Unstructured { return obj("v1", "ConfigMap", "apps", name) }

func entryOf(u *unstructured.Unstructured) inventory.Entry {
	return inventory.Entry{ID: object.IDOf(u), Version: u.GetAPIVersion()}
}

// lastRun is the inventory a successful run of objs left at rev-1.
func lastRun(objs ...*unstructured.Unstructured) *inventory.Inventory {
	inv := &inventory.Inventory{Name: "web", Namespace: "deploy", Status: inventory.Status{
		Ready:               inventory.Condition{Status: "True", Reason: result.ReasonApplySucceed},
		LastAppliedRevision: "rev-1", LastAttemptedRevision: "rev-1",
	}}
	for _, u := range objs {
		inv.Entries = append(inv.Entries, entryOf(u))
	}
	return inv
}

// names are the names of entries' objects, in order.
func names(entries []inventory.Entry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

var (
	errBoom   = errors.New("boom")
	appliedAt = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
)
