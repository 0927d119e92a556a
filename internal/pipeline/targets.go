package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/fluxcd/pkg/ssa"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// target is where, and as whom, objects of a unit are applied, pruned
// and waited for. The zero target is the unit's own cluster and
// identity; a HelmRelease has its own when it names another cluster
// (spec.kubeConfig) or another service account (spec.serviceAccountName)
// than its unit's, as helm-controller installs each release as itself.
type target struct {
	// Cluster names the cluster by the kubeConfig Secret standing for
	// it (see Options.Clusters); empty: the unit's.
	Cluster string
	// Account is the service account impersonated on Cluster. Zero: on
	// the unit's cluster the unit's identity, on another the
	// kubeconfig's own credentials.
	Account identity
}

func (t target) own() bool { return t == target{} }

func (t target) String() string {
	as := "the kubeconfig's own credentials"
	if t.Account.Name != "" {
		as = t.Account.String()
	}
	if t.Cluster == "" {
		return as
	}
	return fmt.Sprintf("%s on the cluster of kubeConfig Secret %s", as, t.Cluster)
}

// releaseTarget is the target of a release whose HelmRelease is in
// namespace, naming account (spec.serviceAccountName) and kc
// (spec.kubeConfig), in a unit applied as unit. helm-controller
// impersonates the account in the HelmRelease's namespace, on the
// kubeConfig's cluster when one is given; without an account it installs
// as itself (or its --default-service-account). Here that is the
// identity that applied the HelmRelease, the unit, never more; on
// another cluster, the kubeconfig's own credentials, as helm-controller
// uses them. A release of the unit's own identity and cluster is the
// unit's (the zero target).
func releaseTarget(namespace, account string, kc *helm.KubeConfig, unit identity) target {
	var t target
	if kc != nil {
		t.Cluster = kc.SecretName
	}
	if account != "" {
		t.Account = identity{Namespace: namespace, Name: account}
	}
	if t.Cluster == "" && (account == "" || unit.is(namespace, account)) {
		return target{}
	}
	return t
}

// chartTarget is releaseTarget of c.
func chartTarget(c helm.Chart, unit identity) target {
	return releaseTarget(c.Release.Namespace, c.ServiceAccountName, c.KubeConfig, unit)
}

// entryTarget is the target an inventory entry records.
func entryTarget(e inventory.Entry) target {
	t := target{Cluster: e.Cluster}
	if ns, name, ok := strings.Cut(e.Account, "/"); ok {
		t.Account = identity{Namespace: ns, Name: name}
	}
	return t
}

// onTarget records t on e.
func onTarget(e inventory.Entry, t target) inventory.Entry {
	e.Cluster, e.Account = t.Cluster, ""
	if t.Account.Name != "" {
		e.Account = t.Account.Namespace + "/" + t.Account.Name
	}
	return e
}

// router connects a run to the targets of its objects, once each, and
// says which target each object is on: the cluster interfaces of a run
// (see connect) ask it for the clients to act through.
type router struct {
	// caller is the unit's cluster as the caller (the unit's identity
	// is the zero target's connection). clusters connects to another
	// cluster by the kubeConfig Secret standing for it
	// (Options.Clusters); nil knows none.
	caller   *kube.Clients
	clusters func(secret string) (*kube.Clients, error)

	mu sync.Mutex
	// conns are the targets connected, with their managers; callers,
	// the other clusters as their kubeconfig's credentials.
	conns   map[target]*conn
	callers map[string]*kube.Clients
	// of is each object's target (not there: the unit's); standIn, the
	// objects whose identity gets its rights from the same apply (see
	// apply.Options.StandIn); releases, each HelmRelease's target
	// (helm.Reference.String()).
	of       map[object.ID]target
	standIn  map[object.ID]bool
	releases map[string]target
	// standInReleases are the releases whose objects stand in: their
	// hooks are checked as the unit too.
	standInReleases map[string]bool
	// caps are each cluster's capabilities, asked for once; unitCaps
	// gives the unit's cluster's (see seedCapabilities).
	caps     map[string]*helm.Capabilities
	unitCaps func(context.Context) (helm.Capabilities, error)
}

// conn is a target connected.
type conn struct {
	c   *kube.Clients
	mgr *ssa.ResourceManager
}

// newRouter routes a run on the cluster of caller, whose unit applies as
// unit.
func newRouter(caller, unit *kube.Clients, clusters func(string) (*kube.Clients, error)) *router {
	return &router{caller: caller, clusters: clusters,
		conns: map[target]*conn{{}: {c: unit, mgr: apply.NewManager(unit)}}, callers: map[string]*kube.Clients{},
		of: map[object.ID]target{}, standIn: map[object.ID]bool{}, releases: map[string]target{}, standInReleases: map[string]bool{},
		caps: map[string]*helm.Capabilities{}}
}

// errNoClusters is a run with a target on another cluster and no way to
// connect to one.
var errNoClusters = errors.New("no kubeconfig stands in for it: only a run of a configuration of Flux Kustomizations maps kubeConfig Secrets to clusters")

// clusterAsCaller is cluster (empty: the unit's) as the caller.
func (rt *router) clusterAsCaller(cluster string) (*kube.Clients, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.callerOf(cluster)
}

// callerOf is clusterAsCaller with rt.mu held.
func (rt *router) callerOf(cluster string) (*kube.Clients, error) {
	if cluster == "" {
		return rt.caller, nil
	}
	if c, ok := rt.callers[cluster]; ok {
		return c, nil
	}
	if rt.clusters == nil {
		return nil, fmt.Errorf("spec.kubeConfig names Secret %s: %w", cluster, errNoClusters)
	}
	c, err := rt.clusters(cluster)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("spec.kubeConfig names Secret %s: %w", cluster, errNoClusters)
	}
	rt.callers[cluster] = c
	return c, nil
}

// connect connects to t, once.
func (rt *router) connect(t target) (*conn, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if c, ok := rt.conns[t]; ok {
		return c, nil
	}
	c, err := rt.callerOf(t.Cluster)
	if err != nil {
		return nil, err
	}
	if t.Account.Name != "" {
		if c, err = c.Impersonate(t.Account.Namespace, t.Account.Name); err != nil {
			return nil, err
		}
	}
	cn := &conn{c: c, mgr: apply.NewManager(c)}
	rt.conns[t] = cn
	return cn, nil
}

// targetOf is the target of object id.
func (rt *router) targetOf(id object.ID) target {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.of[id]
}

// route records the target of each object, and those whose identity's
// rights come with the apply; the target of each release (by
// helm.Reference.String()), and those whose objects stand in.
func (rt *router) route(of map[object.ID]target, standIn map[object.ID]bool, releases map[string]target, standInReleases map[string]bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for id, t := range of {
		rt.of[id] = t
	}
	for id, stand := range standIn {
		rt.standIn[id] = stand
	}
	for name, t := range releases {
		rt.releases[name] = t
	}
	for name, stand := range standInReleases {
		rt.standInReleases[name] = stand
	}
}

// manager is the manager object id is applied with: its target's, which
// the run connected to before planning (see run.route); nil when it
// cannot be connected to, and apply fails the object.
func (rt *router) manager(id object.ID) *ssa.ResourceManager {
	cn, err := rt.connect(rt.targetOf(id))
	if err != nil {
		return nil
	}
	return cn.mgr
}

// standInFor is the unit's manager for an object whose identity gets its
// rights from the same apply; nil for the others.
func (rt *router) standInFor(id object.ID) *ssa.ResourceManager {
	rt.mu.Lock()
	stand := rt.standIn[id]
	rt.mu.Unlock()
	if !stand {
		return nil
	}
	return rt.manager(object.ID{}) // the unit's
}

// accountExists reports whether t's service account exists on its
// cluster, read as the caller, as helm-controller checks the account it
// impersonates; known is false when the caller may not read service
// accounts there (the API server then tells, when the account acts).
func (rt *router) accountExists(ctx context.Context, t target) (exists, known bool, err error) {
	c, err := rt.clusterAsCaller(t.Cluster)
	if err != nil {
		return false, false, err
	}
	return serviceAccountExists(ctx, c.Client, t.Account.Namespace, t.Account.Name)
}

// serviceAccountExists reports whether ServiceAccount namespace/name
// exists; known is false when c may not read it.
func serviceAccountExists(ctx context.Context, c client.Reader, namespace, name string) (exists, known bool, err error) {
	err = c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &corev1.ServiceAccount{})
	switch {
	case err == nil:
		return true, true, nil
	case apierrors.IsNotFound(err):
		return false, true, nil
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return false, false, nil
	}
	return false, false, fmt.Errorf("reading ServiceAccount %s/%s: %w", namespace, name, err)
}

// seedCapabilities gives the unit's cluster's capabilities, which the run
// asks for once: a release of another identity there sees the same.
func (rt *router) seedCapabilities(caps func(context.Context) (helm.Capabilities, error)) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.unitCaps == nil {
		rt.unitCaps = caps
	}
}

// view is what the templates of a release on t see: t's cluster's
// capabilities (asked for once per cluster) and a lookup as t's
// identity.
func (rt *router) view(ctx context.Context, t target) (*helm.View, error) {
	cn, err := rt.connect(t)
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	caps, unitCaps := rt.caps[t.Cluster], rt.unitCaps
	rt.mu.Unlock()
	k := kubeCharts{cn.c}
	if caps == nil && t.Cluster == "" && unitCaps != nil {
		got, err := unitCaps(ctx)
		if err != nil {
			return nil, err
		}
		caps = &got
	}
	if caps == nil {
		got, err := k.Capabilities(ctx)
		if err != nil {
			return nil, err
		}
		caps = &got
		rt.mu.Lock()
		rt.caps[t.Cluster] = caps
		rt.mu.Unlock()
	}
	return &helm.View{Capabilities: *caps, LookupObject: k.LookupObject}, nil
}

// byTarget groups items by the target of each (in the order targets
// first appear), the unit's last: what acts as a release's identity goes
// before what acts as the unit, so that a prune deletes a release's
// objects before the unit's Namespace they may be in.
func byTarget[T any](items []T, of func(T) target) ([]target, map[target][]T) {
	groups := map[target][]T{}
	var order []target
	for _, it := range items {
		t := of(it)
		if _, ok := groups[t]; !ok && !t.own() {
			order = append(order, t)
		}
		groups[t] = append(groups[t], it)
	}
	if _, ok := groups[target{}]; ok {
		order = append(order, target{})
	}
	return order, groups
}
