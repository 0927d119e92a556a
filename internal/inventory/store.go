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

// mergeRun merges a run's write with the inventory as it is now (latest;
// nil if it was deleted): every entry of both (no object another writer
// recorded is lost), the run's status, but what was said of the unit
// meanwhile (suspended, pinned) as it is now.
func mergeRun(latest, mine *Inventory) *Inventory {
	out := *mine
	if latest != nil {
		out.Entries = Union(latest.Entries, mine.Entries)
		out.Status.Suspended, out.Status.Pinned = latest.Status.Suspended, latest.Status.Pinned
	}
	return &out
}

// Update changes the unit's inventory as it is now: change is applied to
// the latest version and written over it, again from the new latest
// whenever another writer got there first. It is how commands say things
// of a unit (suspend, pin) without undoing anything a run recorded, nor
// what another command said. A unit without an inventory is an error.
func Update(ctx context.Context, c client.Client, namespace, name string, change func(*Inventory)) (*Inventory, error) {
	for attempt := 0; ; attempt++ {
		inv, err := Load(ctx, c, namespace, name)
		if err != nil {
			return nil, err
		}
		if inv == nil {
			return nil, fmt.Errorf("unit '%s' has no inventory in namespace %s", name, namespace)
		}
		change(inv)
		saved, err := write(ctx, c, inv)
		if err == nil {
			return saved, nil
		}
		if !apierrors.IsConflict(err) || attempt == maxConflicts {
			return nil, fmt.Errorf("writing inventory Secret %s/%s: %w", namespace, SecretName(name), err)
		}
	}
}

// Save writes a run's inventory over the version it was read at
// (inv.ResourceVersion; empty: it did not exist), so that two writers
// never silently overwrite each other: when the inventory changed since
// (another run, a suspend), it is read again and merged (mergeRun), up to
// a few times. It returns what was written, with its new resourceVersion.
func Save(ctx context.Context, c client.Client, inv *Inventory) (*Inventory, error) {
	out := inv
	for attempt := 0; ; attempt++ {
		saved, err := write(ctx, c, out)
		if err == nil {
			return saved, nil
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) || attempt == maxConflicts {
			return nil, fmt.Errorf("writing inventory Secret %s/%s: %w", inv.Namespace, SecretName(inv.Name), err)
		}
		latest, lerr := Load(ctx, c, inv.Namespace, inv.Name)
		if lerr != nil {
			return nil, lerr
		}
		out = mergeRun(latest, inv)
		out.ResourceVersion = ""
		if latest != nil {
			out.ResourceVersion = latest.ResourceVersion
		}
	}
}

// maxConflicts bounds the re-reads of Save.
const maxConflicts = 5

// write creates the Secret, or updates it over inv.ResourceVersion.
func write(ctx context.Context, c client.Client, inv *Inventory) (*Inventory, error) {
	s, err := toSecret(inv)
	if err != nil {
		return nil, err
	}
	// A version we read is an inventory's (Load checked it, and a Secret's
	// type cannot change): no need to look again before writing over it.
	if inv.ResourceVersion == "" {
		err = c.Create(ctx, s)
	} else {
		s.ResourceVersion = inv.ResourceVersion
		err = c.Update(ctx, s)
	}
	if err != nil {
		return nil, err
	}
	saved := *inv
	saved.ResourceVersion = s.ResourceVersion
	return &saved, nil
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
	inv := &Inventory{Name: name, Namespace: s.Namespace, ResourceVersion: s.ResourceVersion}
	// Every write holds the object list, even an empty one: without it the
	// Secret was edited, and reading it as "no objects" would orphan every
	// object the unit has (and the next write would forget them).
	data := s.Data[objectsKey]
	if len(data) == 0 {
		return nil, fmt.Errorf("inventory Secret %s/%s: %s is missing (the Secret was edited)", s.Namespace, s.Name, objectsKey)
	}
	entries, err := decodeEntries(data)
	if err != nil {
		return nil, fmt.Errorf("inventory Secret %s/%s: reading %s: %w", s.Namespace, s.Name, objectsKey, err)
	}
	inv.Entries = entries
	if data := s.Data[inputsKey]; len(data) > 0 {
		// A cache: damaged, it is a miss (and said), not a failure.
		inv.Inputs = &Inputs{}
		if err := decodeGzip(data, inv.Inputs); err != nil {
			inv.Inputs = nil
			inv.InputsErr = fmt.Errorf("inventory Secret %s/%s: reading %s: %w", s.Namespace, s.Name, inputsKey, err)
		}
	}
	if data := s.Data[statusKey]; len(data) > 0 {
		if err := json.Unmarshal(data, &inv.Status); err != nil {
			return nil, fmt.Errorf("inventory Secret %s/%s: reading %s: %w", s.Namespace, s.Name, statusKey, err)
		}
	}
	return inv, nil
}
