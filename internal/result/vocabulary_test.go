package result

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStageOfKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		apiVersion, kind string
		want             Stage
	}{
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", StageDefinitions},
		{"v1", "Namespace", StageDefinitions},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", StageDefinitions},
		{"storage.k8s.io/v1", "StorageClass", StageClasses},
		{"networking.k8s.io/v1", "IngressClass", StageClasses},
		{"apps/v1", "Deployment", StageResources},
		{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", StageResources},
		{"example.com/v1", "Namespace", StageResources}, // only the core Namespace
	} {
		if got := StageOfKind(tc.apiVersion, tc.kind); got != tc.want {
			t.Errorf("StageOfKind(%s, %s) = %s, want %s", tc.apiVersion, tc.kind, got, tc.want)
		}
	}
}

func TestStageOrder(t *testing.T) {
	t.Parallel()
	order := []Stage{StageDefinitions, StageClasses, StageResources, StagePrune, "unknown"}
	for i := 1; i < len(order); i++ {
		if order[i-1].Order() >= order[i].Order() {
			t.Errorf("%s (%d) does not come before %s (%d)", order[i-1], order[i-1].Order(), order[i], order[i].Order())
		}
	}
}

func TestModeWrites(t *testing.T) {
	t.Parallel()
	for m, want := range map[Mode]bool{ModeApply: true, ModeDelete: true, ModeDrift: true, ModeDiff: false} {
		if m.Writes() != want {
			t.Errorf("%s.Writes() = %v, want %v", m, !want, want)
		}
	}
}

// The JSON schema is documented: typed fields still encode as plain strings.
func TestResultJSONKeepsItsSchema(t *testing.T) {
	t.Parallel()
	data, err := json.Marshal(Result{Unit: "web", Mode: ModeApply, Reason: ReasonApplySucceed, Validation: ValidationServer})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"mode":"apply"`, `"reason":"ApplySucceed"`, `"validation":"server"`} {
		if !json.Valid(data) || !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %s", data, want)
		}
	}
}
