package units

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
)

// variables resolves u's postBuild.substituteFrom when the unit is built,
// as Flux reads them at each reconciliation: each ConfigMap or Secret of
// u's namespace from the repository's configuration files if it is there
// (an encrypted Secret decrypted with the unit's keys), else from the
// unit's cluster; later ones win. A missing one fails the unit unless it
// is optional. The names of the variables whose values came from a Secret,
// or out of SOPS, are returned as secret: the run masks them wherever
// they land. A secret value that a later ConfigMap overrides is not used,
// and not returned.
func (c Config) variables(u *config.Unit, cl *kube.Clients, o pipeline.Options) func(context.Context) (map[string]string, []string, error) {
	return func(ctx context.Context) (map[string]string, []string, error) {
		vars := map[string]string{}
		secret := map[string]bool{}
		for _, ref := range u.SubstituteFrom {
			data, err := c.values(ctx, u, ref, cl, o)
			if err != nil {
				return nil, nil, fmt.Errorf("postBuild.substituteFrom %s %s/%s: %w", ref.Kind, u.Ref.Namespace, ref.Name, err)
			}
			for k := range data {
				secret[k] = ref.Kind == "Secret" || c.encrypted(u, ref)
			}
			maps.Copy(vars, data)
		}
		var names []string
		for _, k := range slices.Sorted(maps.Keys(secret)) {
			if secret[k] {
				names = append(names, k)
			}
		}
		return vars, names, nil
	}
}

func (c Config) values(ctx context.Context, u *config.Unit, ref config.SubstituteRef, cl *kube.Clients, o pipeline.Options) (map[string]string, error) {
	found := c.Set.Lookup(ref.Kind, config.Ref{Namespace: u.Ref.Namespace, Name: ref.Name})
	switch {
	case len(found) > 1:
		var where []string
		for _, v := range found {
			where = append(where, fmt.Sprintf("%s:%d", v.File, v.Line))
		}
		return nil, fmt.Errorf("defined more than once in the configuration (%s)", strings.Join(where, ", "))
	case len(found) == 1 && found[0].Encrypted:
		return decrypted(ctx, found[0], o)
	case len(found) == 1:
		return found[0].Data, nil
	}
	if cl == nil {
		if ref.Optional {
			return nil, nil
		}
		return nil, fmt.Errorf("not in the configuration's files, and there is no cluster to read it from (an offline diff)")
	}
	data, err := fromCluster(ctx, cl, ref.Kind, u.Ref.Namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err) && ref.Optional:
		return nil, nil
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("neither in the configuration's files nor in the cluster (mark it optional if it may be missing)")
	case err != nil:
		return nil, fmt.Errorf("reading it from the cluster: %w", err)
	}
	return data, nil
}

// secretLookup reads a source's Secret (its spec.secretRef) as every
// source's credentials are read (fetch.ReadSecret): from the
// configuration's files, SOPS-decrypted with the run's keys, else from
// the default cluster (none in an offline diff).
func (c Config) secretLookup(ctx context.Context, namespace, name string) (map[string]string, bool, error) {
	found := c.Set.Lookup("Secret", config.Ref{Namespace: namespace, Name: name})
	switch {
	case len(found) > 1:
		var where []string
		for _, v := range found {
			where = append(where, fmt.Sprintf("%s:%d", v.File, v.Line))
		}
		return nil, false, fmt.Errorf("defined more than once in the configuration (%s)", strings.Join(where, ", "))
	case len(found) == 1 && found[0].Encrypted:
		data, err := decrypted(ctx, found[0], c.Base)
		return data, err == nil, err
	case len(found) == 1:
		return found[0].Data, true, nil
	}
	cl := c.defaultCluster()
	if cl == nil {
		return nil, false, nil // no cluster to read it from: not found
	}
	data, err := fromCluster(ctx, cl, "Secret", namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading it from the cluster: %w", err)
	}
	return data, true, nil
}

// encrypted reports whether ref is a SOPS-encrypted document of the
// configuration, whatever its kind: its values came out of SOPS.
func (c Config) encrypted(u *config.Unit, ref config.SubstituteRef) bool {
	found := c.Set.Lookup(ref.Kind, config.Ref{Namespace: u.Ref.Namespace, Name: ref.Name})
	return len(found) == 1 && found[0].Encrypted
}

// accountLookup reads the pull secrets (imagePullSecrets) of a
// ServiceAccount of the cluster, for an OCIRepository's
// spec.serviceAccountName (see source.Options.Accounts); without a
// cluster there is none.
func (c Config) accountLookup(ctx context.Context, namespace, name string) ([]string, bool, error) {
	cl := c.defaultCluster()
	if cl == nil {
		return nil, false, nil
	}
	var sa corev1.ServiceAccount
	switch err := cl.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &sa); {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading it from the cluster: %w", err)
	}
	var out []string
	for _, ref := range sa.ImagePullSecrets {
		if ref.Name != "" {
			out = append(out, ref.Name)
		}
	}
	return out, true, nil
}

// defaultCluster is the configuration's default cluster, where sources'
// Secrets and accounts are read; nil when there is none to read (an
// offline diff, or one the run cannot reach).
func (c Config) defaultCluster() *kube.Clients {
	if c.Cluster == nil {
		return nil
	}
	cl, _, err := c.Cluster(nil)
	if err != nil {
		return nil
	}
	return cl
}

func fromCluster(ctx context.Context, cl *kube.Clients, kind, namespace, name string) (map[string]string, error) {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	if kind == "ConfigMap" {
		var cm corev1.ConfigMap
		if err := cl.Client.Get(ctx, key, &cm); err != nil {
			return nil, err
		}
		return cm.Data, nil
	}
	var s corev1.Secret
	if err := cl.Client.Get(ctx, key, &s); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(s.Data))
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out, nil
}

// decrypted decrypts a SOPS-encrypted Secret of the configuration with
// the unit's keys and returns its values.
func decrypted(ctx context.Context, v *config.Values, o pipeline.Options) (map[string]string, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(v.Raw, &u.Object); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", v.File, v.Line, err)
	}
	dec, err := decrypt.New(o.Decryption)
	if err != nil {
		return nil, err
	}
	if err := dec.DecryptObjects(ctx, []*unstructured.Unstructured{u}, map[object.ID]string{object.IDOf(u): v.File}); err != nil {
		return nil, err
	}
	out := map[string]string{}
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	for k, s := range data {
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%s: data.%s is not base64", v.File, k)
		}
		out[k] = string(raw)
	}
	stringData, _, _ := unstructured.NestedStringMap(u.Object, "stringData")
	maps.Copy(out, stringData)
	return out, nil
}
