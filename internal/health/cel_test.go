package health

import (
	"context"
	"strings"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Flux's RFC 0009 order: a lagging observedGeneration is in progress;
// then inProgress, failed, current, the first true one decides; none
// true is in progress. Every verdict names the expression and its value.
func TestExpressionsJudgeAsFluxDoes(t *testing.T) {
	t.Parallel()
	evs, err := ParseExpressions([]Expressions{{
		APIVersion: "example.com/v1", Kind: "Widget",
		InProgress: "status.phase == 'Pending'",
		Failed:     "status.phase == 'Failed'",
		Current:    "status.phase == 'Ready' && status.replicas >= 1",
	}})
	if err != nil {
		t.Fatal(err)
	}
	ev := evs[schema.GroupKind{Group: "example.com", Kind: "Widget"}]
	widget := func(generation int64, st map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "generation": generation}}}
		if st != nil {
			u.Object["status"] = st
		}
		return u
	}
	for _, tc := range []struct {
		name    string
		obj     *unstructured.Unstructured
		want    status.Status
		message string
		err     string
	}{
		{"observedGeneration lags", widget(2, map[string]any{"observedGeneration": int64(1), "phase": "Ready", "replicas": int64(1)}), status.InProgressStatus, "status.observedGeneration 1 is not metadata.generation 2", ""},
		{"inProgress first", widget(1, map[string]any{"phase": "Pending"}), status.InProgressStatus, `healthCheckExprs inProgress "status.phase == 'Pending'" is true`, ""},
		{"failed", widget(1, map[string]any{"phase": "Failed"}), status.FailedStatus, `healthCheckExprs failed "status.phase == 'Failed'" is true`, ""},
		{"current", widget(1, map[string]any{"observedGeneration": int64(1), "phase": "Ready", "replicas": int64(2)}), status.CurrentStatus, `healthCheckExprs current "status.phase == 'Ready' && status.replicas >= 1" is true`, ""},
		{"none true", widget(1, map[string]any{"phase": "Ready", "replicas": int64(0)}), status.InProgressStatus, `healthCheckExprs: none is true: inProgress "status.phase == 'Pending'", failed "status.phase == 'Failed'", current "status.phase == 'Ready' && status.replicas >= 1" are false`, ""},
		{"no status yet", widget(1, nil), "", "", `healthCheckExprs inProgress: failed to evaluate the CEL expression 'status.phase == 'Pending''`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ev.evaluate(context.Background(), tc.obj)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.want || res.Message != tc.message {
				t.Errorf("%s %q, want %s %q", res.Status, res.Message, tc.want, tc.message)
			}
		})
	}
}

// Expressions are checked as Flux checks them: each parses, current is
// required, a kind is listed once; a kind left empty judges its group.
func TestParseExpressions(t *testing.T) {
	t.Parallel()
	_, err := ParseExpressions([]Expressions{
		{APIVersion: "example.com/v1", Kind: "Widget", Current: "status.ready =="},
		{APIVersion: "example.com/v1", Kind: "Gadget"},
		{APIVersion: "example.com/v1", Kind: "Widget", Current: "true"},
	})
	for _, want := range []string{"healthCheckExprs[0].current: failed to parse the CEL expression 'status.ready =='", "healthCheckExprs[1].current: required", "healthCheckExprs[2]: Widget.example.com is listed twice"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	evs, err := ParseExpressions([]Expressions{{APIVersion: "example.com/v1", Current: "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if !evs.Judges(schema.GroupKind{Group: "example.com", Kind: "Anything"}) || evs.Judges(schema.GroupKind{Group: "other.com", Kind: "Anything"}) {
		t.Error("a group's expressions judge its kinds, and only them")
	}
	merged := evs.Merge(Evaluators{{Group: "other.com", Kind: "Thing"}: &evaluator{}, {Group: "example.com"}: &evaluator{}})
	if len(merged) != 2 || merged[schema.GroupKind{Group: "example.com"}] != evs[schema.GroupKind{Group: "example.com"}] {
		t.Errorf("merged %v: the unit's own expressions win", merged)
	}
}
