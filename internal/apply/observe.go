package apply

import (
	"context"
	"strings"
	"sync"

	"github.com/fluxcd/pkg/ssa"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// observer is a client that remembers, per object, what ssa's Diff read
// and what its dry-run returned: ssa answers "unchanged" without handing
// back the live object, and a plan needs its resourceVersion (to record
// it) and its field managers (to know whether kubectl's must be taken
// over, which only ssa's ApplyAll does).
type observer struct {
	client.Client
	mu   sync.Mutex
	seen map[object.ID]*observation
	// ignore are the run's ignore rules: the live objects they select
	// are kept (observation.live).
	ignore ignoreRules
}

type observation struct {
	exists        bool   // the GET found the object
	takeover      bool   // it carries kubectl's or Helm's annotations or field managers
	helmRelease   string // the Helm release (namespace/name) its annotations name
	dryRunVersion string // resourceVersion of the dry-run's result
	// managed are the GET's managedFields, which ssa drops from the live
	// object it returns: a three-way diff tells by them who changed what.
	managed []metav1.ManagedFieldsEntry
	// live is the object as the GET found it, when an ignore rule
	// selects it.
	live *unstructured.Unstructured
}

func newObserver(c client.Client) *observer {
	return &observer{Client: c, seen: map[object.ID]*observation{}}
}

func (o *observer) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := o.Client.Get(ctx, key, obj)
	if u, ok := obj.(*unstructured.Unstructured); ok && err == nil {
		ob := o.at(object.IDOf(u))
		ob.exists, ob.takeover, ob.managed = true, needsTakeover(u), u.GetManagedFields()
		ob.helmRelease = helmReleaseOf(u)
		if len(o.ignore.paths(u)) > 0 {
			ob.live = u.DeepCopy()
		}
	}
	return err
}

func (o *observer) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	err := o.Client.Patch(ctx, obj, patch, opts...)
	po := &client.PatchOptions{}
	po.ApplyOptions(opts)
	if u, ok := obj.(*unstructured.Unstructured); ok && err == nil && len(po.DryRun) > 0 {
		o.at(object.IDOf(u)).dryRunVersion = u.GetResourceVersion()
	}
	return err
}

// at returns id's observation, creating it; the caller holds no lock, and
// each object is planned by one goroutine, so only the map needs one.
func (o *observer) at(id object.ID) *observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	ob := o.seen[id]
	if ob == nil {
		ob = &observation{}
		o.seen[id] = ob
	}
	return ob
}

func (o *observer) get(id object.ID) observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ob := o.seen[id]; ob != nil {
		return *ob
	}
	return observation{}
}

// takenOverPrefix starts the reason of an entry whose object a Helm
// release had: "taken over from Helm release namespace/name".
const takenOverPrefix = "taken over from Helm release "

// TakenOverFrom is the Helm release (namespace, name) an applied entry's
// object was taken over from, as its reason says.
func TakenOverFrom(e result.Entry) (namespace, name string, ok bool) {
	rel, found := strings.CutPrefix(e.Reason, takenOverPrefix)
	if !found {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rel, "/")
	return namespace, name, ok && namespace != "" && name != ""
}

// takeoverManagers are the field managers ApplyAll folds into ours, so
// fields removed from Git really go from objects first applied by kubectl,
// the helm CLI or helm-controller.
var takeoverManagers = []ssa.FieldManager{
	{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
	{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
	{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
	{Name: "helm", OperationType: metav1.ManagedFieldsOperationApply},
	{Name: "helm", OperationType: metav1.ManagedFieldsOperationUpdate},
	{Name: "helm-controller", OperationType: metav1.ManagedFieldsOperationApply},
	{Name: "helm-controller", OperationType: metav1.ManagedFieldsOperationUpdate},
}

// Helm's ownership annotations: an object carrying them belongs to that
// release, and `helm upgrade` adopts it. Taking an object over removes
// them, so a later helm upgrade (or a helm-controller still running)
// refuses the object ("invalid ownership metadata") rather than silently
// fighting this tool over it.
const (
	helmReleaseName      = "meta.helm.sh/release-name"
	helmReleaseNamespace = "meta.helm.sh/release-namespace"
)

var takeoverAnnotations = []string{corev1.LastAppliedConfigAnnotation, helmReleaseName, helmReleaseNamespace}

// helmReleaseOf is the Helm release (namespace/name) u's annotations say
// it belongs to, or "".
func helmReleaseOf(u *unstructured.Unstructured) string {
	a := u.GetAnnotations()
	if a[helmReleaseName] == "" {
		return ""
	}
	return a[helmReleaseNamespace] + "/" + a[helmReleaseName]
}

// needsTakeover reports whether ApplyAll's cleanup would patch live, with
// ssa's own patch builders.
func needsTakeover(live *unstructured.Unstructured) bool {
	if len(ssa.PatchRemoveAnnotations(live, takeoverAnnotations)) > 0 {
		return true
	}
	p, err := ssa.PatchReplaceFieldsManagers(live, takeoverManagers, FieldManager)
	return err != nil || len(p) > 0
}
