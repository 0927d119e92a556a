package pipeline

import (
	"encoding/json"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/images"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Rendered is a unit's desired state: decrypted, substituted objects and the
// files they came from.
type Rendered struct {
	Objects []*unstructured.Unstructured
	Sources map[object.ID]string
	// SecretFields say where objects hold values that came from a
	// secret: decrypted from SOPS, or substituted from a Secret (or a
	// decrypted source). Diffs and renderings mask those, and the values
	// of Secrets, and show the rest as Git has it. Objects holding none
	// have no entry.
	SecretFields map[object.ID]*object.SecretFields
	// Inputs are what the build read below the repository root.
	Inputs build.Inputs
	// Charts say what each HelmRelease of the unit rendered (see
	// Options.Charts).
	Charts []helm.Chart
	// LeftOut are the Flux objects of the build that a unit of a
	// configuration does not apply (see Options.RunFlux).
	LeftOut []LeftOut
	// Health are the HelmReleases' spec.healthCheckExprs, parsed: how
	// the unit's waits judge the kinds they name.
	Health health.Evaluators
	// Notes say what rendering read and did not act on (a ResourceSet's
	// dependency it could not check), one line each.
	Notes []string
	// ResourceSets are the ResourceSets the build held, expanded in its
	// place; Generated names, for each object one generated, which.
	ResourceSets []object.ID
	Generated    map[object.ID]object.ID
}

// WriteYAML prints the rendered objects as a YAML stream with every
// secret value masked: the values of Secrets, and every field whose value
// came from a secret (see SecretFields).
func (r *Rendered) WriteYAML(w io.Writer) error {
	out, err := object.ToYAML(r.masked())
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, out)
	return err
}

// WriteJSON prints the rendered objects as one v1 List, as kubectl -o json
// does, with every secret value masked as WriteYAML masks them.
func (r *Rendered) WriteJSON(w io.Writer) error {
	items := make([]any, len(r.Objects))
	for i, u := range r.masked() {
		items[i] = u.Object
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}

// masked returns the objects with their secret values masked.
func (r *Rendered) masked() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(r.Objects))
	for i, u := range r.Objects {
		out[i] = diff.Masked(u, r.SecretFields[object.IDOf(u)])
	}
	return out
}

// Images lists the images the rendered objects run (see package images),
// with the HelmRelease of those a chart rendered, secret values masked as
// WriteYAML masks them.
func (r *Rendered) Images() []result.Image {
	return images.List(r.masked(), releaseOf(&Rendered{}, r))
}
