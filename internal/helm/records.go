package helm

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// releaseSecretType is the type of the Secrets Helm's default storage
// driver keeps a release's records in.
const releaseSecretType = corev1.SecretType("helm.sh/release.v1")

// RemoveRecords deletes the storage records of the Helm release
// namespace/name (the helm CLI's or helm-controller's): the Secrets
// (Helm's default driver) and ConfigMaps (its configmap driver) in
// namespace labelled owner=helm,name=<name> whose names are Helm's for
// that release (sh.helm.release.v1.<name>.v<revision>), Secrets only of
// Helm's type. Nothing else is touched: not another release's records, not
// an object that merely carries the labels. It returns the names of the
// records deleted, as Kind/name.
func RemoveRecords(ctx context.Context, c client.Client, namespace, name string) ([]string, error) {
	sel := client.MatchingLabels{"owner": "helm", "name": name}
	prefix := "sh.helm.release.v1." + name + ".v"
	isRecord := func(objName string) bool {
		rev, ok := strings.CutPrefix(objName, prefix)
		return ok && rev != "" && strings.Trim(rev, "0123456789") == ""
	}
	var out []string
	del := func(obj client.Object, kind string) error {
		if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Helm release record %s %s/%s: %w", kind, namespace, obj.GetName(), err)
		}
		out = append(out, kind+"/"+obj.GetName())
		return nil
	}
	var secrets corev1.SecretList
	if err := c.List(ctx, &secrets, client.InNamespace(namespace), sel); err != nil {
		return out, fmt.Errorf("listing the records of Helm release %s/%s: %w", namespace, name, err)
	}
	for i := range secrets.Items {
		s := &secrets.Items[i]
		if s.Type == releaseSecretType && isRecord(s.Name) {
			if err := del(s, "Secret"); err != nil {
				return out, err
			}
		}
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace(namespace), sel); err != nil {
		return out, fmt.Errorf("listing the records of Helm release %s/%s: %w", namespace, name, err)
	}
	for i := range cms.Items {
		if isRecord(cms.Items[i].Name) {
			if err := del(&cms.Items[i], "ConfigMap"); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}
