package inventory

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Load reads unit name's inventory from namespace. A unit that has never run
// gives (nil, nil).
func Load(ctx context.Context, c client.Reader, namespace, name string) (*Inventory, error) {
	var s corev1.Secret
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: SecretName(name)}, &s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading inventory Secret %s/%s: %w", namespace, SecretName(name), err)
	}
	return fromSecret(&s)
}

// List returns every inventory in namespace, sorted by unit name.
func List(ctx context.Context, c client.Reader, namespace string) ([]*Inventory, error) {
	var list corev1.SecretList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{ManagedByLabel: ManagedByValue}); err != nil {
		return nil, fmt.Errorf("listing inventories in %s: %w", namespace, err)
	}
	var out []*Inventory
	for i := range list.Items {
		if list.Items[i].Type != SecretType {
			continue
		}
		inv, err := fromSecret(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Save creates or replaces the inventory Secret.
func Save(ctx context.Context, c client.Client, inv *Inventory) error {
	s, err := toSecret(inv)
	if err != nil {
		return err
	}
	var live corev1.Secret
	err = c.Get(ctx, client.ObjectKeyFromObject(s), &live)
	switch {
	case apierrors.IsNotFound(err):
		err = c.Create(ctx, s)
	case err == nil:
		if live.Type != SecretType {
			return fmt.Errorf("Secret %s/%s exists but is not a kustomize-deploy inventory (type %q): refusing to overwrite it", s.Namespace, s.Name, live.Type)
		}
		s.ResourceVersion = live.ResourceVersion
		err = c.Update(ctx, s)
	}
	if err != nil {
		return fmt.Errorf("writing inventory Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

// Delete removes the inventory Secret; a missing one is not an error.
func Delete(ctx context.Context, c client.Client, namespace, name string) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: SecretName(name)}}
	if err := c.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting inventory Secret %s/%s: %w", namespace, s.Name, err)
	}
	return nil
}

func toSecret(inv *Inventory) (*corev1.Secret, error) {
	objects, err := encodeEntries(inv.Entries)
	if err != nil {
		return nil, err
	}
	status, err := json.Marshal(inv.Status)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{objectsKey: objects, statusKey: status}
	if inv.Inputs != nil {
		if data[inputsKey], err = encodeGzip(inv.Inputs); err != nil {
			return nil, err
		}
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      SecretName(inv.Name),
			Namespace: inv.Namespace,
			Labels:    map[string]string{ManagedByLabel: ManagedByValue, UnitLabel: inv.Name},
		},
		Type: SecretType,
		Data: data,
	}, nil
}

func fromSecret(s *corev1.Secret) (*Inventory, error) {
	name := s.Labels[UnitLabel]
	if s.Type != SecretType || name == "" {
		return nil, fmt.Errorf("Secret %s/%s is not a kustomize-deploy inventory", s.Namespace, s.Name)
	}
	inv := &Inventory{Name: name, Namespace: s.Namespace}
	if data := s.Data[objectsKey]; len(data) > 0 {
		entries, err := decodeEntries(data)
		if err != nil {
			return nil, fmt.Errorf("inventory Secret %s/%s: reading %s: %w", s.Namespace, s.Name, objectsKey, err)
		}
		inv.Entries = entries
	}
	if data := s.Data[inputsKey]; len(data) > 0 {
		inv.Inputs = &Inputs{}
		if err := decodeGzip(data, inv.Inputs); err != nil {
			return nil, fmt.Errorf("inventory Secret %s/%s: reading %s: %w", s.Namespace, s.Name, inputsKey, err)
		}
	}
	if data := s.Data[statusKey]; len(data) > 0 {
		if err := json.Unmarshal(data, &inv.Status); err != nil {
			return nil, fmt.Errorf("inventory Secret %s/%s: reading %s: %w", s.Namespace, s.Name, statusKey, err)
		}
	}
	return inv, nil
}
