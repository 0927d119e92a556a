package pipeline

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// The waits judge with the unit's health expressions and its
// HelmReleases' (the unit's winning for a kind both name), and an object
// kstatus calls ready once applied is waited for when an expression
// judges its kind.
func TestWaitUsesHealthExpressions(t *testing.T) {
	parse := func(e health.Expressions) health.Evaluators {
		evs, err := health.ParseExpressions([]health.Expressions{e})
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	own := parse(health.Expressions{APIVersion: "v1", Kind: "ConfigMap", Current: "has(data.ready)"})
	charts := parse(health.Expressions{APIVersion: "example.com/v1", Kind: "Widget", Current: "true"})
	cm, secret := configMap("settings"), obj("v1", "Secret", "apps", "token")
	f := newFixture(t, nil, cm, secret)
	f.health = charts
	res, err := f.run(result.ModeApply, Options{Wait: true, HealthExprs: own})
	if err != nil || res.Reason != result.ReasonApplySucceed {
		t.Fatalf("%v %+v", err, res)
	}
	if !slices.Equal(f.waiter.waited, []object.ID{object.IDOf(cm)}) {
		t.Errorf("waited for %v: want the ConfigMap alone, which an expression judges", f.waiter.waited)
	}
	evs := f.waiter.opts.Evaluators
	if !evs.Judges(schema.GroupKind{Kind: "ConfigMap"}) || !evs.Judges(schema.GroupKind{Group: "example.com", Kind: "Widget"}) || evs.Judges(schema.GroupKind{Kind: "Secret"}) {
		t.Errorf("evaluators %v", evs)
	}
}
