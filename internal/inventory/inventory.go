// Package inventory records, in one Secret per unit, which objects a unit
// owns and how its last run ended. It is what prune trusts: nothing outside
// an inventory is ever deleted.
package inventory

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Labels and keys of inventory Secrets.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "kustomize-deploy"
	UnitLabel      = "kustomize-deploy.dev/unit"
	SecretType     = "kustomize-deploy.dev/inventory"
	SecretPrefix   = "kustomize-deploy."
	objectsKey     = "objects.json.gz"
	statusKey      = "status.json"
	inputsKey      = "inputs.json.gz"
	// maxUnitName keeps the Secret name (prefix + name) and the owner label
	// values within Kubernetes' 63-character label value limit.
	maxUnitName = 63
)

// Entry is one owned object: its ID and the API version it was applied
// with; after a successful apply also the digest of its manifest and the
// live resourceVersion that matched it, so the next run can skip it if
// neither has changed. Cluster and Account, when set, say where and as
// whom the object is applied, pruned and waited for, when that is not
// the unit's cluster and identity (a HelmRelease's spec.kubeConfig and
// spec.serviceAccountName).
type Entry struct {
	object.ID
	Version         string `json:"version"`
	Digest          string `json:"digest,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Release, for an object a chart rendered, is its HelmRelease
	// (HelmRelease/namespace/name): a run that leaves the release out
	// keeps its objects by it.
	Release string `json:"release,omitempty"`
	// Cluster names the cluster by the kubeConfig Secret standing for it
	// (empty: the unit's); Account is the service account impersonated
	// there, namespace/name (empty: the unit's identity on the unit's
	// cluster, the kubeconfig's own credentials on another).
	Cluster string `json:"cluster,omitempty"`
	Account string `json:"account,omitempty"`
	// Generator, for an object a ResourceSet generated, is that
	// ResourceSet (ResourceSet/namespace/name): while it stays in the
	// build, what it stops generating (a closed pull request's preview)
	// is collected as the operator collects it, protected kind or not.
	Generator string `json:"generator,omitempty"`
}

// key tells entries apart: one object per ID on each cluster.
type key struct {
	cluster string
	id      object.ID
}

func (e Entry) key() key { return key{e.Cluster, e.ID} }

// Condition is the unit's Ready condition after its last run.
type Condition struct {
	Status             string        `json:"status"` // "True", "False" or "Unknown"
	Reason             result.Reason `json:"reason"`
	Message            string        `json:"message"`
	LastTransitionTime time.Time     `json:"lastTransitionTime"`
}

// Status is how the unit's last run went, and what was said of it since.
type Status struct {
	Ready                 Condition `json:"ready"`
	LastAppliedRevision   string    `json:"lastAppliedRevision,omitempty"`
	LastAttemptedRevision string    `json:"lastAttemptedRevision,omitempty"`
	// LastAppliedRevisionTime is when LastAppliedRevision was committed:
	// a run of an older commit is refused, so a slow run never rolls back
	// a newer deploy.
	LastAppliedRevisionTime *time.Time `json:"lastAppliedRevisionTime,omitempty"`
	// Suspended units are skipped by every run until resumed.
	Suspended bool `json:"suspended,omitempty"`
	// Pinned, when set, is the only revision runs may apply.
	Pinned string `json:"pinned,omitempty"`
	// Config names the configuration (repository and directory of Flux
	// Kustomizations) the unit was last applied from; a unit that leaves
	// it is garbage-collected per DeletionPolicy (Delete, Orphan or
	// WaitForTermination).
	Config         string `json:"config,omitempty"`
	DeletionPolicy string `json:"deletionPolicy,omitempty"`
	// Releases are the Helm releases the unit last applied, each with
	// the digest of its chart and values (helm.Chart.ConfigDigest): a
	// release not among them is installed
	// (its install hooks run), one whose digest changed is upgraded.
	Releases []Release `json:"releases,omitempty"`
	// Health is the key of the health checks (pipeline's healthKey: wait,
	// healthChecks) under which the apply found every object it waited
	// for ready; "" when it did not wait for them all. An object whose
	// resourceVersion is the one recorded has the status it had then
	// (status is part of the object), so a run with the same key need
	// not wait for it again.
	Health string `json:"health,omitempty"`
	// History are the unit's last apply runs (HistoryLimit), oldest
	// first.
	History []Revision `json:"history,omitempty"`
}

// Release is a Helm release a unit applied.
type Release struct {
	// Name is the release's namespace and name: ns/name.
	Name   string `json:"name"`
	Digest string `json:"digest"`
	// Upgraded says it last rendered as an upgrade.
	Upgraded bool `json:"upgraded,omitempty"`
}

// Inventory is a unit's record.
type Inventory struct {
	Name      string
	Namespace string
	Entries   []Entry
	Status    Status
	// Inputs, after a successful apply, are what its build read.
	Inputs *Inputs
	// InputsErr says why the Inputs recorded could not be read (Inputs
	// is then nil): they are only a cache, so a run rebuilds.
	InputsErr error
	// ResourceVersion is the Secret's when it was read or written; a
	// write only succeeds over that version (see Save). Empty for an
	// inventory that did not exist.
	ResourceVersion string
}

// Inputs are the files and directories a unit's build read, relative to
// the repository root, and a digest of them and of the build options: if
// it is the same on the next run, so is the build.
type Inputs struct {
	Digest string   `json:"digest"`
	Files  []string `json:"files"`
	Dirs   []string `json:"dirs"`
}

var unitName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ValidateName checks a unit name: a DNS label, since it becomes part of a
// Secret name and a label value.
func ValidateName(name string) error {
	if name == "" {
		return errors.New("a unit name is required")
	}
	if len(name) > maxUnitName || !unitName.MatchString(name) {
		return fmt.Errorf("unit name %q is not valid: use at most %d lower-case letters, digits and '-', starting and ending with a letter or digit", name, maxUnitName)
	}
	return nil
}

// SecretName is the name of the Secret holding unit name's inventory.
func SecretName(name string) string { return SecretPrefix + name }

// Union returns the entries of a followed by those of b that a lacks; for an
// object in both (ID, on its cluster), b's entry wins (it is the one about
// to be applied).
func Union(a, b []Entry) []Entry {
	idx := map[key]int{}
	out := make([]Entry, 0, len(a)+len(b))
	for _, e := range a {
		idx[e.key()] = len(out)
		out = append(out, e)
	}
	for _, e := range b {
		if i, ok := idx[e.key()]; ok {
			out[i] = e
			continue
		}
		idx[e.key()] = len(out)
		out = append(out, e)
	}
	return out
}

// Diff returns the entries of old whose objects (ID, on its cluster) are
// not in current: what a prune would delete.
func Diff(old, current []Entry) []Entry {
	keep := map[key]bool{}
	for _, e := range current {
		keep[e.key()] = true
	}
	var out []Entry
	for _, e := range old {
		if !keep[e.key()] {
			out = append(out, e)
		}
	}
	return out
}

func encodeEntries(entries []Entry) ([]byte, error) { return encodeGzip(entries) }

func decodeEntries(data []byte) ([]Entry, error) {
	var entries []Entry
	err := decodeGzip(data, &entries)
	return entries, err
}

func encodeGzip(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeGzip(data []byte, v any) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
