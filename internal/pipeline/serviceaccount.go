package pipeline

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// accounts tells whether a service account exists, as the caller sees it
// (package kube's client).
type accounts interface {
	// Exists says whether namespace/name exists; known is false when the
	// caller may not read service accounts there.
	Exists(ctx context.Context, namespace, name string) (exists, known bool, err error)
}

// kubeAccounts reads service accounts as the caller, not as the account
// impersonated: that one may not read itself.
type kubeAccounts struct{ c client.Client }

func (k kubeAccounts) Exists(ctx context.Context, namespace, name string) (bool, bool, error) {
	return serviceAccountExists(ctx, k.c, namespace, name)
}

// MissingAccountError is a unit that impersonates a service account that
// does not exist: the API server would forbid everything it sends, and
// the error would blame the account's rights.
type MissingAccountError struct {
	Namespace, Name string
	// By is the unit of the run whose build holds the account, when
	// known.
	By string
}

func (e *MissingAccountError) Error() string {
	msg := fmt.Sprintf("ServiceAccount %s/%s does not exist: the unit applies as it (impersonation)", e.Namespace, e.Name)
	if e.By != "" {
		return msg + fmt.Sprintf("; unit %s creates it, and must apply before this unit", e.By)
	}
	return msg + "; no unit of this run is known to create it"
}

// checkAccount makes sure the service account the unit applies as exists
// before anything is sent as it. A caller that may not read service
// accounts finds nothing out, and the run goes on.
func (r *run) checkAccount(ctx context.Context) error {
	as := appliesAs(r.opts)
	if r.asCaller || as.Name == "" || r.cl.accounts == nil {
		return nil
	}
	ns := or(as.Namespace, r.ns)
	exists, known, err := r.cl.accounts.Exists(ctx, ns, as.Name)
	if err != nil {
		r.progress("warning: whether ServiceAccount %s/%s exists could not be read: %v", ns, as.Name, err)
		return nil
	}
	if exists || !known {
		return nil
	}
	return failure(r.dryRunReason(), &MissingAccountError{Namespace: ns, Name: as.Name, By: r.opts.ServiceAccountBy})
}
