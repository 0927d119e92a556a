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
