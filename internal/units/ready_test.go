package units

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

const backendDoc = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app-backend
  namespace: apps
  labels:
    app/version: v1.2.3
spec:
  interval: 10m
`

// Flux's documented readyExpr (lockstep upgrade): the dependency's
// version label must match the unit's, and it must be Ready at its
// generation. self and dep are the Kustomizations as written, dep with
// the status its run left.
func TestReadyExprAsFluxDocumentsIt(t *testing.T) {
	t.Parallel()
	self := &config.Unit{Ref: config.Ref{Namespace: "apps", Name: "app-frontend"},
		Document: []byte(strings.NewReplacer("app-backend", "app-frontend").Replace(backendDoc))}
	e, err := newReadyExpr(self, `dep.metadata.labels['app/version'] == self.metadata.labels['app/version'] &&
  dep.status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True') &&
  dep.metadata.generation == dep.status.observedGeneration`)
	if err != nil {
		t.Fatal(err)
	}
	backend := config.Ref{Namespace: "apps", Name: "app-backend"}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		doc  string
		st   *depStatus
		want string // "" ready
	}{
		{"ready, same version", backendDoc, statusOfResult(&result.Result{Ready: true, Reason: result.ReasonApplySucceed, Revision: "main@sha1:abc"}), ""},
		{"failed", backendDoc, statusOfResult(&result.Result{Reason: result.ReasonHealthCheckFailed, Message: "timeout"}), "is false"},
		{"another version", strings.Replace(backendDoc, "v1.2.3", "v1.2.4", 1), statusOfResult(&result.Result{Ready: true}), "is false"},
		{"ready as recorded in its inventory", backendDoc, statusOfInventory(&inventory.Inventory{Status: inventory.Status{Ready: inventory.Condition{Status: "True"}}}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.ready(ctx, kustomizationObject([]byte(tc.doc), backend, tc.st))
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}

	if _, err := newReadyExpr(self, "dep.status.ready + 1"); err == nil {
		t.Error("an expression that is not a boolean compiled")
	}
	if _, err := readyExprs(&config.Unit{DependsOn: []config.Ref{backend}, ReadyExprs: []config.ReadyExpr{{Dependency: backend, Expr: "dep.("}}}); err == nil ||
		!strings.Contains(err.Error(), "spec.dependsOn[0].readyExpr: failed to parse the CEL expression") {
		t.Errorf("a bad expression: %v", err)
	}
}

// A readyExpr replaces its dependency's readiness: a failed dependency
// whose expression holds lets the unit run; a ready one whose
// expression does not holds it back, saying why.
func TestRunReadyReplacesSatisfied(t *testing.T) {
	ns := nodes("db", "cache", "api:db", "web:cache")
	ns[2].Ready = map[string]func(Outcome) error{"db": func(Outcome) error { return nil }}
	ns[3].Ready = map[string]func(Outcome) error{"cache": func(o Outcome) error {
		if o.Result.Reason == result.ReasonApplySucceed {
			return errorString("readyExpr \"false\" is false")
		}
		return nil
	}}
	g, err := NewGraph(ns)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{fail: map[string]bool{"db": true}}
	out := g.Run(context.Background(), 4, r.run(g), skipped(g))
	want := []string{
		"db=HealthCheckFailed ",
		"cache=ApplySucceed ",
		"api=ApplySucceed ",
		`web=DependencyNotReady blocked by cache (readyExpr "false" is false)`,
	}
	if got := summary(out); !slices.Equal(got, want) {
		t.Errorf("outcomes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
