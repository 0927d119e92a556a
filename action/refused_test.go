package action

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Kustomization with a field kustomize-deploy does not know refuses its
// unit alone: the Action annotates the field's line, the unit's status
// fails, the other unit is applied, and the step fails.
func TestConfigRefusedUnitIsAnnotated(t *testing.T) {
	ns := cluster.Namespace(t)
	g := newGitRepo(t)
	g.write("deploy/good/settings.yaml", settingsYAML("good-settings", "1"))
	g.write("deploy/typo/settings.yaml", settingsYAML("typo-settings", "1"))
	// typo's Kustomization starts at line 15; its spec.prunee is line 27.
	g.write("clusters/test/units.yaml", kustomization("good", ns, "deploy/good", "")+kustomization("typo", ns, "deploy/typo", "  prunee: true\n"))
	head := g.commit("a typo")

	gh := newFakeGitHub(t)
	e := configRun(t, gh, "push", g, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig)
	res := e.run()
	if res.code != exitFail {
		t.Fatalf("exit %d, want a failure\n%s", res.code, res.stdout)
	}
	prefix := "::error file=clusters/test/units.yaml,line=27,title=BuildFailed in typo::"
	if strings.Count(res.stdout, prefix) != 1 || !strings.Contains(res.stdout, "Kustomization "+ns+"/typo: spec.prunee: unknown field") {
		t.Errorf("the log lacks one %q:\n%s", prefix, res.stdout)
	}
	k := cluster.Client(t).CoreV1().ConfigMaps(ns)
	if _, err := k.Get(t.Context(), "good-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the other unit was not applied: %v", err)
	}
	if _, err := k.Get(t.Context(), "typo-settings", metav1.GetOptions{}); err == nil {
		t.Error("the refused unit was applied")
	}
	if last := gh.lastStatusOf("kustomize-deploy/typo"); last["state"] != "failure" {
		t.Errorf("typo's status: %v (all: %v)", last, statusesByContext(gh))
	}
	if last := gh.lastStatusOf("kustomize-deploy/good"); last["state"] != "success" {
		t.Errorf("good's status: %v", last)
	}
}
