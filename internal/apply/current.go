package apply

import (
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CurrentOnceApplied reports whether u, as the API server answered its
// apply, is ready for good: of a built-in kind whose readiness kstatus
// reads from the object alone and no controller reports later (no status,
// or one the API server sets as it stores the object), and Current as the
// answer stands. A wait for it could only confirm it, at the cost of
// listing its kind: a Namespace is Active from its creation on, a
// ClusterIP Service and RBAC objects are ready once they exist. Kinds a
// controller reports on (Deployments, custom resources) are never.
func CurrentOnceApplied(u *unstructured.Unstructured) bool {
	if u == nil || !settledKinds[u.GroupVersionKind().GroupKind()] {
		return false
	}
	res, err := status.Compute(u)
	return err == nil && res.Status == status.CurrentStatus
}

// settledKinds are the kinds CurrentOnceApplied judges.
var settledKinds = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:      true,
	{Kind: "Service"}:        true,
	{Kind: "ServiceAccount"}: true,
	{Kind: "LimitRange"}:     true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:              true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:               true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:              true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                  true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                     true,
}
