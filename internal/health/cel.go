package health

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	kstatusreaders "github.com/fluxcd/cli-utils/pkg/kstatus/polling/statusreaders"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	cliobject "github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/runtime/cel"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Expressions are the CEL health checks of one kind: a Kustomization's
// (or a HelmRelease's) spec.healthCheckExprs entry. They judge objects of
// that kind instead of kstatus, as Flux's RFC 0009 has it: an object
// whose status.observedGeneration (an integer) lags metadata.generation
// is in progress; else InProgress, Failed and Current are evaluated in
// that order, the first true one decides; none true is in progress.
// Each expression sees the object's top-level fields (apiVersion, kind,
// metadata, spec, status, ...) as variables, in Flux's CEL environment
// (fluxcd/pkg/runtime/cel).
type Expressions struct {
	// APIVersion and Kind select the objects; a Kind of "" selects every
	// kind of the API group, as Flux's status reader does.
	APIVersion, Kind string
	// Current is required; the others are optional.
	Current, InProgress, Failed string
}

// GroupKind is what e judges.
func (e Expressions) GroupKind() schema.GroupKind {
	gk := schema.FromAPIVersionAndKind(e.APIVersion, e.Kind).GroupKind()
	if e.Kind == "" {
		gk.Kind = ""
	}
	return gk
}

// evaluator is Expressions parsed.
type evaluator struct {
	current, inProgress, failed *cel.Expression
}

// Evaluators are parsed Expressions, by the kind (or group) they judge.
type Evaluators map[schema.GroupKind]*evaluator

// ParseExpressions parses exprs (a spec.healthCheckExprs list) as Flux
// does: every expression must parse, Current is required, and one kind
// may not be listed twice. Errors name the entry and the expression.
func ParseExpressions(exprs []Expressions) (Evaluators, error) {
	out := Evaluators{}
	var errs []error
	for i, e := range exprs {
		gk := e.GroupKind()
		if _, dup := out[gk]; dup {
			errs = append(errs, fmt.Errorf("healthCheckExprs[%d]: %s is listed twice", i, kindName(gk)))
			continue
		}
		ev := &evaluator{}
		for _, x := range []struct {
			field, text string
			to          **cel.Expression
		}{{"current", e.Current, &ev.current}, {"inProgress", e.InProgress, &ev.inProgress}, {"failed", e.Failed, &ev.failed}} {
			if x.text == "" {
				if x.field == "current" {
					errs = append(errs, fmt.Errorf("healthCheckExprs[%d].current: required", i))
				}
				continue
			}
			// Not compiled, as Flux's StatusEvaluator does not: custom
			// resources need not have the five usual top-level fields.
			expr, err := cel.NewExpression(x.text)
			if err != nil {
				errs = append(errs, fmt.Errorf("healthCheckExprs[%d].%s: %w", i, x.field, err))
				continue
			}
			*x.to = expr
		}
		out[gk] = ev
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Merge returns e with the evaluators of other for the kinds e has none
// for.
func (e Evaluators) Merge(other Evaluators) Evaluators {
	if len(other) == 0 {
		return e
	}
	out := Evaluators{}
	for gk, ev := range other {
		out[gk] = ev
	}
	for gk, ev := range e {
		out[gk] = ev
	}
	return out
}

// Judges says whether e judges objects of kind gk.
func (e Evaluators) Judges(gk schema.GroupKind) bool {
	return e.lookup(gk) != nil
}

func (e Evaluators) lookup(gk schema.GroupKind) *evaluator {
	if ev := e[gk]; ev != nil {
		return ev
	}
	return e[schema.GroupKind{Group: gk.Group}]
}

// evaluate judges u, saying in the message which expression decided and
// its value.
func (ev *evaluator) evaluate(ctx context.Context, u *unstructured.Unstructured) (*status.Result, error) {
	obj := u.UnstructuredContent()
	if observed, ok, err := unstructured.NestedInt64(obj, "status", "observedGeneration"); err == nil && ok {
		if gen, ok, err := unstructured.NestedInt64(obj, "metadata", "generation"); err == nil && ok && observed != gen {
			return &status.Result{Status: status.InProgressStatus,
				Message: fmt.Sprintf("status.observedGeneration %d is not metadata.generation %d", observed, gen)}, nil
		}
	}
	for _, x := range []struct {
		field  string
		expr   *cel.Expression
		status status.Status
	}{
		{"inProgress", ev.inProgress, status.InProgressStatus},
		{"failed", ev.failed, status.FailedStatus},
		{"current", ev.current, status.CurrentStatus},
	} {
		if x.expr == nil {
			continue
		}
		ok, err := x.expr.EvaluateBoolean(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("healthCheckExprs %s: %w", x.field, err)
		}
		if ok {
			return &status.Result{Status: x.status, Message: fmt.Sprintf("healthCheckExprs %s %q is true", x.field, x.expr.String())}, nil
		}
	}
	var parts []string
	for _, x := range []struct {
		field string
		expr  *cel.Expression
	}{{"inProgress", ev.inProgress}, {"failed", ev.failed}, {"current", ev.current}} {
		if x.expr != nil {
			parts = append(parts, fmt.Sprintf("%s %q", x.field, x.expr.String()))
		}
	}
	return &status.Result{Status: status.InProgressStatus,
		Message: "healthCheckExprs: none is true: " + strings.Join(parts, ", ") + " are false"}, nil
}

// statusReaders are kstatus readers judging the kinds of e by their
// expressions, for the poller.
func (e Evaluators) statusReaders(mapper meta.RESTMapper) []engine.StatusReader {
	if len(e) == 0 {
		return nil
	}
	return []engine.StatusReader{&celReader{evaluators: e, mapper: mapper}}
}

// celReader is a kstatus StatusReader for the kinds Evaluators judge.
type celReader struct {
	evaluators Evaluators
	mapper     meta.RESTMapper
}

var _ engine.StatusReader = (*celReader)(nil)

func (r *celReader) Supports(gk schema.GroupKind) bool { return r.evaluators.Judges(gk) }

func (r *celReader) generic(ctx context.Context, gk schema.GroupKind) engine.StatusReader {
	ev := r.evaluators.lookup(gk)
	return kstatusreaders.NewGenericStatusReader(r.mapper, func(u *unstructured.Unstructured) (*status.Result, error) {
		return ev.evaluate(ctx, u)
	})
}

func (r *celReader) ReadStatus(ctx context.Context, reader engine.ClusterReader, id cliobject.ObjMetadata) (*event.ResourceStatus, error) {
	return r.generic(ctx, id.GroupKind).ReadStatus(ctx, reader, id)
}

func (r *celReader) ReadStatusForObject(ctx context.Context, reader engine.ClusterReader, u *unstructured.Unstructured) (*event.ResourceStatus, error) {
	return r.generic(ctx, u.GroupVersionKind().GroupKind()).ReadStatusForObject(ctx, reader, u)
}

func kindName(gk schema.GroupKind) string {
	if gk.Kind == "" {
		return "API group " + gk.Group
	}
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}
