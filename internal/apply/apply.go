package apply

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kdobject "github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Options tune Apply.
type Options struct {
	// Force recreates objects whose immutable fields changed. Objects
	// annotated force: enabled are recreated regardless.
	Force bool
	// WaitTimeout bounds the wait for definitions (CRDs, Namespaces) and
	// classes to be ready before the next stage is applied.
	WaitTimeout time.Duration
	// Sources maps objects to the files they came from, for entries and errors.
	Sources map[kdobject.ID]string
}

// applyOptions translates Options and the per-object annotations into
// ssa's selectors.
func applyOptions(opts Options) ssa.ApplyOptions {
	o := ssa.DefaultApplyOptions()
	o.Force = opts.Force
	o.ForceSelector = kdobject.Selector(kdobject.ForceKey, kdobject.Enabled)
	o.ExclusionSelector = kdobject.Selector(kdobject.SSAKey, kdobject.SSAIgnore)
	o.IfNotPresentSelector = kdobject.Selector(kdobject.SSAKey, kdobject.SSAIfNotPresent)
	if opts.WaitTimeout > 0 {
		o.WaitTimeout = opts.WaitTimeout
	}
	o.Cleanup = ssa.ApplyCleanupOptions{
		// Take objects over from kubectl: drop its last-applied annotation
		// and its field managers so removed fields really go.
		Annotations: []string{corev1.LastAppliedConfigAnnotation},
		FieldManagers: []ssa.FieldManager{
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
		},
		// ssa: Merge keeps other managers' fields.
		Exclusions: kdobject.Selector(kdobject.SSAKey, kdobject.SSAMerge),
	}
	return o
}

// StageOf classifies an object the way ssa.ApplyAllStaged does.
func StageOf(u *unstructured.Unstructured) result.Stage {
	switch {
	case utils.IsClusterDefinition(u):
		return result.StageDefinitions
	case utils.IsClassDefinition(u):
		return result.StageClasses
	default:
		return result.StageResources
	}
}

// stages splits objs by stage, keeping their order within a stage.
func stages(objs []*unstructured.Unstructured) map[result.Stage][]*unstructured.Unstructured {
	m := map[result.Stage][]*unstructured.Unstructured{}
	for _, o := range objs {
		s := StageOf(o)
		m[s] = append(m[s], o)
	}
	return m
}

var stageOrder = []result.Stage{result.StageDefinitions, result.StageClasses, result.StageResources}

// Apply server-side applies objs in stages: definitions (CRDs, Namespaces,
// ClusterRoles) first, waiting for them to be ready, then classes, then the
// rest. It returns one entry per object applied so far, also on error; the
// error names the object that failed and its source file.
func Apply(ctx context.Context, m *ssa.ResourceManager, objs []*unstructured.Unstructured, opts Options) ([]result.Entry, error) {
	ao := applyOptions(opts)
	byStage := stages(objs)
	var entries []result.Entry
	for _, stage := range stageOrder {
		batch := byStage[stage]
		if len(batch) == 0 {
			continue
		}
		cs, err := m.ApplyAll(ctx, batch, ao)
		if cs != nil {
			entries = append(entries, toEntries(cs, stage, opts.Sources)...)
		}
		if err != nil {
			return entries, explain(err, batch, opts.Sources)
		}
		if stage == result.StageResources {
			break
		}
		if err := m.WaitForSetWithContext(ctx, cs.ToObjMetadataSet(), ssa.WaitOptions{Interval: time.Second, Timeout: ao.WaitTimeout}); err != nil {
			return entries, fmt.Errorf("%s stage not ready: %w", stage, err)
		}
	}
	return entries, nil
}

func toEntries(cs *ssa.ChangeSet, stage result.Stage, sources map[kdobject.ID]string) []result.Entry {
	out := make([]result.Entry, 0, len(cs.Entries))
	for _, e := range cs.Entries {
		id := idOf(e.ObjMetadata)
		out = append(out, result.Entry{
			Object:  id,
			Version: e.GroupVersion,
			Source:  sources[id],
			Stage:   stage,
			Action:  result.Action(e.Action),
		})
	}
	return out
}

func idOf(m object.ObjMetadata) kdobject.ID {
	return kdobject.ID{Group: m.GroupKind.Group, Kind: m.GroupKind.Kind, Namespace: m.Namespace, Name: m.Name}
}
