package helm

import (
	"fmt"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
)

// Lockdown is helm-controller's part of Flux's multi-tenancy lockdown,
// as the run honours it (see config.Lockdown): zero locks nothing down.
type Lockdown struct {
	// DefaultServiceAccount is --default-service-account: a HelmRelease
	// without spec.serviceAccountName is installed as this account of
	// its namespace (helm-controller internal/kube/impersonate.go,
	// SetImpersonationConfig). AccountAt says where it was declared.
	DefaultServiceAccount, AccountAt string
	// NoCrossNamespaceRefs is --no-cross-namespace-refs: a chart in
	// another namespace is refused (internal/acl/acl.go,
	// AllowsAccessTo). CrossAt says where it was declared.
	NoCrossNamespaceRefs bool
	CrossAt              string
}

// ControllerAccount is helm-controller's own ServiceAccount, in the
// namespace Flux runs in, as flux install and Flux Operator make it.
const ControllerAccount = "helm-controller"

// ownAccount maps a release installed as helm-controller's own account
// in ns, the namespace Flux runs in (the lockdown has platform
// HelmReleases name it: the controller acting as itself), to the unit's
// identity, which stands in for the controller (its account, with
// Flux's controllers left out, is not in the cluster); "" when it does not.
func ownAccount(rel *Release, ns string) string {
	if ns == "" || rel.Namespace != ns || rel.ServiceAccountName != ControllerAccount {
		return ""
	}
	rel.ServiceAccountName = ""
	return fmt.Sprintf("HelmRelease %s/%s: installed as the unit: %s is helm-controller's own account in namespace %s, which this run stands in for", rel.Namespace, rel.Name, ControllerAccount, ns)
}

// lockDown applies l to rel: its chart's references are checked, and
// its account defaulted, with a note saying so.
func (l Lockdown) lockDown(rel *Release) (notes []string, err error) {
	if l.NoCrossNamespaceRefs {
		if err := l.crossNamespace(rel); err != nil {
			return nil, err
		}
	}
	if rel.ServiceAccountName == "" && l.DefaultServiceAccount != "" {
		rel.ServiceAccountName = l.DefaultServiceAccount
		notes = append(notes, fmt.Sprintf("HelmRelease %s/%s: installed as system:serviceaccount:%s:%s, helm-controller's --default-service-account=%s (%s), as it has no spec.serviceAccountName",
			rel.Namespace, rel.Name, rel.Namespace, l.DefaultServiceAccount, l.DefaultServiceAccount, l.AccountAt))
	}
	return notes, nil
}

// crossNamespace refuses a chart of rel in another namespace, as
// helm-controller does: spec.chart makes a HelmChart in its sourceRef's
// namespace, named <namespace>-<name> of the HelmRelease
// (reconcile/helmchart_template.go); spec.chartRef names its object.
func (l Lockdown) crossNamespace(rel *Release) error {
	var kind, field string
	var ref config.Ref
	switch {
	case rel.ChartRef != nil:
		kind, field, ref = rel.ChartRef.Kind, "spec.chartRef", config.Ref{Namespace: rel.ChartRef.Namespace, Name: rel.ChartRef.Name}
	case rel.Chart != nil:
		kind, field, ref = "HelmChart", "spec.chart.spec.sourceRef", config.Ref{Namespace: rel.Chart.SourceRef.Namespace, Name: rel.Namespace + "-" + rel.Name}
	default:
		return nil
	}
	if ref.Namespace == "" || ref.Namespace == rel.Namespace {
		return nil
	}
	return &config.AccessDeniedError{Field: field, Msg: config.CrossNamespaceHelmRelease(kind, ref),
		Flag: "helm-controller's --no-cross-namespace-refs=true", At: l.CrossAt}
}
