package fetch

import (
	"context"
	"fmt"
)

// SecretLookup reads a Secret's data (decoded) by namespace and name:
// found is false when it holds none. Whoever calls a source's fetch
// says where Secrets are: the configuration's files (SOPS-decrypted),
// a unit's own objects, the cluster.
type SecretLookup func(ctx context.Context, namespace, name string) (data map[string]string, found bool, err error)

// AccountLookup reads the pull secrets (imagePullSecrets) of a
// ServiceAccount by namespace and name: found is false when there is no
// such account. Whoever calls a source's pull says where accounts are
// (the cluster).
type AccountLookup func(ctx context.Context, namespace, name string) (pullSecrets []string, found bool, err error)

// ReadSecret reads the Secret a source's field (spec.secretRef,
// spec.certSecretRef, spec.verify.secretRef) names, in namespace,
// through lookup: the one way a source's credentials are read, for a
// Kustomization's source and a chart's alike. found is false when the
// lookup has no such Secret (nil lookup: none); an error names the field
// and the Secret, never a value.
func ReadSecret(ctx context.Context, lookup SecretLookup, field, namespace, name string) (data map[string]string, found bool, err error) {
	if lookup == nil || name == "" {
		return nil, false, nil
	}
	data, found, err = lookup(ctx, namespace, name)
	if err != nil {
		return nil, false, fmt.Errorf("%s: Secret %s/%s: %w", field, namespace, name, err)
	}
	return data, found, nil
}

// MissingError is an object a source's credentials are read from that
// is not where they are read (the configuration's files, the cluster):
// a Secret (spec.secretRef, spec.verify.secretRef, an account's
// imagePullSecrets) or a ServiceAccount (spec.serviceAccountName).
// Typed, so that a run can tell it from every other failure: nothing was
// fetched yet, and when the configuration creates that object in a unit
// that runs earlier, the source can be resolved once that one has
// applied it.
type MissingError struct {
	// Kind is Secret or ServiceAccount.
	Kind, Namespace, Name string
	// Msg says what is missing, naming the field and the object.
	Msg string
}

func (e *MissingError) Error() string { return e.Msg }

// Object names the missing object: KIND NAMESPACE/NAME.
func (e *MissingError) Object() string { return e.Kind + " " + e.Namespace + "/" + e.Name }
