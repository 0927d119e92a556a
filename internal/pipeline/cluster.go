package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/lock"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
)

// cluster is what a run needs of Kubernetes, as small interfaces the
// pipeline owns: the rules of a run (what the inventory keeps when a step
// fails, that nothing is applied after a failed validation) are
// table-tested with fakes of them, and run end to end on a real cluster.
type cluster struct {
	store   store
	locker  locker
	applier applier
	pruner  pruner
	waiter  waiter
	scopes  scopes
	charts  chartReader
	hooks   hookRunner
	records helmRecords
	// routes connects to the targets of a unit's HelmReleases (see
	// target); nil: every object is the unit's (tests' fakes).
	routes *router
	// accounts reads service accounts as the caller; nil checks none.
	accounts accounts
}

// helmRecords removes Helm releases' storage records (package helm).
type helmRecords interface {
	// Remove deletes the records of release name in namespace, as the
	// target of object from (one the run took over from it), and says
	// which.
	Remove(ctx context.Context, from object.ID, namespace, name string) ([]string, error)
}

// chartReader reads what rendering charts needs of the cluster (package
// helm): ConfigMaps and Secrets a HelmRelease names that are not in the
// unit, and what templates see of the cluster (.Capabilities).
type chartReader interface {
	Lookup(ctx context.Context, kind, namespace, name string) (map[string]string, bool, error)
	Capabilities(ctx context.Context) (helm.Capabilities, error)
	// LookupObject is the templates' lookup function (helm.ObjectLookup):
	// it only reads.
	LookupObject(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error)
}

// locker keeps two runs from writing one unit at once (package lock).
type locker interface {
	// Lock waits for and takes unit's lock; held ends if the lock is
	// lost, release gives it back.
	Lock(ctx context.Context, namespace, unit string) (held context.Context, release func(), err error)
}

// store reads and writes inventories (package inventory).
type store interface {
	Load(ctx context.Context, namespace, name string) (*inventory.Inventory, error)
	// Save writes inv over the version it was read at, merging on a
	// conflict (inventory.Save), and returns what it wrote.
	Save(ctx context.Context, inv *inventory.Inventory) (*inventory.Inventory, error)
	Delete(ctx context.Context, namespace, name string) error
}

// applier plans and carries out server-side applies (package apply),
// and reads back what the unit recorded of its objects.
type applier interface {
	DryRun(ctx context.Context, objs []*unstructured.Unstructured, opts apply.Options) (*apply.Plan, error)
	Execute(ctx context.Context, p *apply.Plan, opts apply.Options) (*apply.Outcome, error)
	Unmoved(ctx context.Context, recs []apply.Recorded) (map[object.ID]string, error)
	Settled(ctx context.Context, applied []apply.Applied) (map[object.ID]string, error)
}

// pruner deletes what the unit owns and no longer wants (package prune).
type pruner interface {
	Prune(ctx context.Context, candidates []inventory.Entry, dryRun bool) (*prune.Outcome, error)
	// WaitGone waits until entries are gone from the cluster.
	WaitGone(ctx context.Context, entries []inventory.Entry, timeout time.Duration) error
}

// waiter waits for objects to become ready (package health).
type waiter interface {
	// Wait returns, when every one is ready, the resourceVersion each
	// had when found so.
	Wait(ctx context.Context, ids []object.ID, opts health.Options) (health.Observed, error)
}

// scopes knows which kinds the cluster serves, and which of them live in
// a namespace.
type scopes interface {
	// Namespaced reports whether objects of gk are namespaced; known is
	// false when the cluster does not serve the kind.
	Namespaced(gk schema.GroupKind) (namespaced, known bool)
	// Serves lists the versions the cluster serves gk at: none when it
	// serves no such kind.
	Serves(gk schema.GroupKind) ([]string, error)
}

// connect makes the cluster of a run on c: the inventory is read and
// written as the caller, everything else as opts.ServiceAccount when set
// (impersonation, so the API server's RBAC limits what the unit touches),
// except the objects of a HelmRelease of another identity or cluster,
// which go through that target (see router).
func connect(c *kube.Clients, ns string, owner map[string]string, opts Options) (cluster, error) {
	actor := c
	if opts.ServiceAccount != "" {
		var err error
		if actor, err = c.Impersonate(or(opts.ServiceAccountNamespace, ns), opts.ServiceAccount); err != nil {
			return cluster{}, err
		}
	}
	var selector labels.Selector
	if opts.PruneSelector != "" {
		var err error
		if selector, err = labels.Parse(opts.PruneSelector); err != nil {
			return cluster{}, fmt.Errorf("prune selector %q: %w", opts.PruneSelector, err)
		}
	}
	rt := newRouter(c, actor, opts.Clusters)
	return cluster{
		store:    inventoryStore{c.Client},
		locker:   leaseLocker{c: c.Client, opts: lock.Options{Holder: opts.Holder, Wait: opts.LockTimeout, Progress: opts.Progress}},
		applier:  &kubeApplier{rt: rt, owner: owner},
		pruner:   &kubePruner{rt: rt, owner: owner, selector: selector},
		waiter:   kubeWaiter{rt},
		scopes:   mapperScopes{c.Mapper},
		charts:   kubeCharts{actor},
		hooks:    kubeHooks{rt},
		records:  kubeRecords{rt},
		routes:   rt,
		accounts: kubeAccounts{c.Client},
	}, nil
}

// kubeRecords removes Helm release records as the target of the objects
// taken over from them.
type kubeRecords struct{ rt *router }

func (k kubeRecords) Remove(ctx context.Context, from object.ID, namespace, name string) ([]string, error) {
	cn, err := k.rt.connect(k.rt.targetOf(from))
	if err != nil {
		return nil, err
	}
	return helm.RemoveRecords(ctx, cn.c.Client, namespace, name)
}

// kubeCharts reads for charts as the run's identity (its service account,
// when it impersonates one), as helm-controller reads valuesFrom.
type kubeCharts struct{ c *kube.Clients }

func (k kubeCharts) Lookup(ctx context.Context, kind, namespace, name string) (map[string]string, bool, error) {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	var err error
	data := map[string]string{}
	switch kind {
	case "ConfigMap":
		var cm corev1.ConfigMap
		if err = k.c.Client.Get(ctx, key, &cm); err == nil {
			data = cm.Data
		}
	case "Secret":
		var s corev1.Secret
		if err = k.c.Client.Get(ctx, key, &s); err == nil {
			for key, v := range s.Data {
				data[key] = string(v)
			}
		}
	default:
		return nil, false, fmt.Errorf("%s is neither a ConfigMap nor a Secret", kind)
	}
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading it from the cluster: %w", err)
	}
	return data, true, nil
}

// LookupObject reads an object, or a list of them, as Helm's lookup does:
// a namespaced kind is read in namespace (every namespace when it is
// empty), a cluster-scoped one regardless of it; what does not exist is
// an empty map. It is the run's identity that reads, so the unit's RBAC
// bounds what templates may see.
func (k kubeCharts) LookupObject(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	mapping, err := k.c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return map[string]any{}, fmt.Errorf("lookup %s %s: %w", apiVersion, kind, err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		namespace = ""
	}
	if name != "" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		err := k.c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
		if apierrors.IsNotFound(err) {
			return map[string]any{}, nil
		}
		if err != nil {
			return map[string]any{}, fmt.Errorf("lookup %s %s %s/%s: %w", apiVersion, kind, namespace, name, err)
		}
		return u.Object, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(kind + "List"))
	if err := k.c.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		if apierrors.IsNotFound(err) {
			return map[string]any{}, nil
		}
		return map[string]any{}, fmt.Errorf("lookup %s %s in %q: %w", apiVersion, kind, namespace, err)
	}
	return list.UnstructuredContent(), nil
}

func (k kubeCharts) Capabilities(context.Context) (helm.Capabilities, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(k.c.Config)
	if err != nil {
		return helm.Capabilities{}, err
	}
	return helm.ClusterCapabilities(dc)
}

type inventoryStore struct{ c client.Client }

func (s inventoryStore) Load(ctx context.Context, namespace, name string) (*inventory.Inventory, error) {
	return inventory.Load(ctx, s.c, namespace, name)
}

func (s inventoryStore) Save(ctx context.Context, inv *inventory.Inventory) (*inventory.Inventory, error) {
	return inventory.Save(ctx, s.c, inv)
}

func (s inventoryStore) Delete(ctx context.Context, namespace, name string) error {
	return inventory.Delete(ctx, s.c, namespace, name)
}

type leaseLocker struct {
	c    client.Client
	opts lock.Options
}

func (l leaseLocker) Lock(ctx context.Context, namespace, unit string) (context.Context, func(), error) {
	held, err := lock.Acquire(ctx, l.c, namespace, unit, l.opts)
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		// Released even when the run was cancelled, within a bound.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = held.Release(rctx) // a lease left behind expires on its own
	}
	return held.Context(), release, nil
}

// kubeApplier applies each object as its target (see router).
type kubeApplier struct {
	rt    *router
	owner map[string]string
}

func (a *kubeApplier) DryRun(ctx context.Context, objs []*unstructured.Unstructured, opts apply.Options) (*apply.Plan, error) {
	opts.StandIn = a.rt.standInFor
	return apply.DryRun(ctx, a.rt.manager, objs, opts)
}

func (a *kubeApplier) Execute(ctx context.Context, p *apply.Plan, opts apply.Options) (*apply.Outcome, error) {
	return apply.Execute(ctx, a.rt.manager, p, opts)
}

func (a *kubeApplier) Unmoved(ctx context.Context, recs []apply.Recorded) (map[object.ID]string, error) {
	return readRecorded(a.rt, recs, func(r apply.Recorded) object.ID { return r.ID }, func(c client.Reader, recs []apply.Recorded) (map[object.ID]string, error) {
		return apply.Unmoved(ctx, c, recs, a.owner)
	})
}

func (a *kubeApplier) Settled(ctx context.Context, applied []apply.Applied) (map[object.ID]string, error) {
	return readRecorded(a.rt, applied, func(r apply.Applied) object.ID { return r.ID }, func(c client.Reader, applied []apply.Applied) (map[object.ID]string, error) {
		return apply.Settled(ctx, c, applied, a.owner)
	})
}

// readRecorded reads recs, each through its object's target, with read.
func readRecorded[T any](rt *router, recs []T, id func(T) object.ID, read func(client.Reader, []T) (map[object.ID]string, error)) (map[object.ID]string, error) {
	order, groups := byTarget(recs, func(r T) target { return rt.targetOf(id(r)) })
	out := map[object.ID]string{}
	var errs []error
	for _, t := range order {
		cn, err := rt.connect(t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got, err := read(cn.c.Client, groups[t])
		maps.Copy(out, got)
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// kubePruner deletes each entry as the target it records.
type kubePruner struct {
	rt       *router
	owner    map[string]string
	selector labels.Selector
}

func (p *kubePruner) WaitGone(ctx context.Context, entries []inventory.Entry, timeout time.Duration) error {
	order, groups := byTarget(entries, entryTarget)
	var errs []error
	for _, t := range order {
		cn, err := p.rt.connect(t)
		if err == nil {
			err = prune.WaitGone(ctx, prune.NewCluster(cn.c, cn.mgr, p.owner), groups[t], timeout, time.Second)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (p *kubePruner) Prune(ctx context.Context, candidates []inventory.Entry, dryRun bool) (*prune.Outcome, error) {
	order, groups := byTarget(candidates, entryTarget)
	out := &prune.Outcome{}
	var errs []error
	for _, t := range order {
		cn, err := p.rt.connect(t)
		if err != nil {
			out.Keep = append(out.Keep, groups[t]...)
			errs = append(errs, fmt.Errorf("%d object(s) applied as %s stay: %w", len(groups[t]), t, err))
			continue
		}
		got, err := prune.Run(ctx, prune.NewCluster(cn.c, cn.mgr, p.owner), groups[t], prune.Options{OwnerLabels: p.owner, DryRun: dryRun, Selector: p.selector})
		if got == nil {
			out.Keep = append(out.Keep, groups[t]...)
		} else {
			out.Entries, out.Keep = append(out.Entries, got.Entries...), append(out.Keep, got.Keep...)
		}
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// kubeWaiter waits for each object as its target, all targets at once.
type kubeWaiter struct{ rt *router }

func (w kubeWaiter) Wait(ctx context.Context, ids []object.ID, opts health.Options) (health.Observed, error) {
	order, groups := byTarget(ids, w.rt.targetOf)
	if len(order) > 1 && opts.Progress != nil {
		opts.Progress = &lockedWriter{w: opts.Progress} // one line at a time
	}
	errs := make([]error, len(order))
	seen := make([]health.Observed, len(order))
	var wg sync.WaitGroup
	for i, t := range order {
		wg.Go(func() {
			cn, err := w.rt.connect(t)
			if err == nil {
				seen[i], err = health.Wait(ctx, cn.c, groups[t], opts)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := health.Observed{}
	for _, o := range seen {
		maps.Copy(out, o)
	}
	return out, nil
}

// lockedWriter writes to w one call at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type mapperScopes struct{ m meta.RESTMapper }

func (s mapperScopes) Namespaced(gk schema.GroupKind) (bool, bool) {
	mapping, err := s.m.RESTMapping(gk)
	if err != nil {
		return false, false
	}
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace, true
}

func (s mapperScopes) Serves(gk schema.GroupKind) ([]string, error) {
	served, err := kube.Serves(s.m, gk)
	return served.Versions, err
}
