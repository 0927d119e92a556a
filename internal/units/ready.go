package units

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fluxcd/pkg/runtime/cel"
	celgo "github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A Kustomization's dependsOn[].readyExpr replaces, for that dependency,
// the check that it is ready (as kustomize-controller has it, without
// its AdditiveCELDependencyCheck gate): the unit runs once the
// dependency has ended (in this run) or is deployed (outside it) and the
// expression is true. The expression sees two Kustomizations as Flux
// gives them: self, the unit's, and dep, the dependency's, each as
// written with a status made of what this run (or the dependency's
// inventory) knows: its Ready condition (status, reason, message), the
// revisions applied and attempted, observedGeneration equal to
// metadata.generation (1 unless written).

// readyExpr is a compiled readyExpr of unit self.
type readyExpr struct {
	text string
	expr *cel.Expression
	self map[string]any
}

// newReadyExpr compiles text as Flux compiles a readyExpr: a boolean of
// the variables self and dep.
func newReadyExpr(self *config.Unit, text string) (*readyExpr, error) {
	expr, err := cel.NewExpression(text, cel.WithCompile(), cel.WithOutputType(celgo.BoolType), cel.WithStructVariables("self", "dep"))
	if err != nil {
		return nil, err
	}
	return &readyExpr{text: text, expr: expr, self: kustomizationObject(self.Document, self.Ref, nil)}, nil
}

// ready says nil when the expression is true of dep, else why not.
func (e *readyExpr) ready(ctx context.Context, dep map[string]any) error {
	ok, err := e.expr.EvaluateBoolean(ctx, map[string]any{"self": e.self, "dep": dep})
	switch {
	case err != nil:
		return fmt.Errorf("readyExpr: %w", err)
	case !ok:
		return fmt.Errorf("readyExpr %q is false", e.text)
	}
	return nil
}

// depStatus is what a dependency's status says of its last run.
type depStatus struct {
	ready              bool
	reason, message    string
	applied, attempted string
	lastTransitionTime time.Time
}

// statusOfResult is the status of a unit that ran (or was skipped) in
// this run.
func statusOfResult(res *result.Result) *depStatus {
	if res == nil {
		return nil
	}
	s := &depStatus{ready: res.Ready, reason: string(res.Reason), message: res.Message, attempted: res.Revision, lastTransitionTime: res.StartedAt}
	if res.Ready {
		s.applied = res.Revision
	}
	return s
}

// statusOfInventory is the status a dependency outside the run recorded.
func statusOfInventory(inv *inventory.Inventory) *depStatus {
	if inv == nil {
		return nil
	}
	st := inv.Status
	return &depStatus{ready: st.Ready.Status == "True", reason: string(st.Ready.Reason), message: st.Ready.Message,
		applied: st.LastAppliedRevision, attempted: st.LastAttemptedRevision}
}

// kustomizationObject is the Kustomization doc (YAML, as read), or one
// naming ref alone when there is none, with status st (none when nil),
// as a CEL struct variable.
func kustomizationObject(doc []byte, ref config.Ref, st *depStatus) map[string]any {
	obj := map[string]any{}
	if data, err := yaml.YAMLToJSON(doc); err == nil && len(doc) > 0 {
		_ = json.Unmarshal(data, &obj) // numbers as int64, as Flux's converter has them
	}
	if obj["apiVersion"] == nil {
		obj["apiVersion"], obj["kind"] = "kustomize.toolkit.fluxcd.io/v1", "Kustomization"
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["name"], meta["namespace"] = ref.Name, ref.Namespace
	generation, ok := meta["generation"].(int64)
	if !ok {
		generation = 1
		meta["generation"] = generation
	}
	delete(obj, "status")
	if st == nil {
		return obj
	}
	cond := map[string]any{"type": "Ready", "status": "False", "reason": st.reason, "message": st.message}
	if st.ready {
		cond["status"] = "True"
	}
	if !st.lastTransitionTime.IsZero() {
		cond["lastTransitionTime"] = st.lastTransitionTime.UTC().Format(time.RFC3339)
	}
	status := map[string]any{"observedGeneration": generation, "conditions": []any{cond}}
	if st.applied != "" {
		status["lastAppliedRevision"] = st.applied
	}
	if st.attempted != "" {
		status["lastAttemptedRevision"] = st.attempted
	}
	obj["status"] = status
	return obj
}

// readyExprs compiles u's readyExprs, by dependency; an error names the
// dependsOn entry.
func readyExprs(u *config.Unit) (map[config.Ref]*readyExpr, error) {
	out := map[config.Ref]*readyExpr{}
	for _, re := range u.ReadyExprs {
		e, err := newReadyExpr(u, re.Expr)
		if err != nil {
			i := slices.Index(u.DependsOn, re.Dependency)
			return nil, fmt.Errorf("spec.dependsOn[%d].readyExpr: %w", i, err)
		}
		out[re.Dependency] = e
	}
	return out, nil
}

func withReadyExpr(m map[string]func(context.Context, *inventory.Inventory) error, name string, f func(context.Context, *inventory.Inventory) error) map[string]func(context.Context, *inventory.Inventory) error {
	if m == nil {
		m = map[string]func(context.Context, *inventory.Inventory) error{}
	}
	m[name] = f
	return m
}
