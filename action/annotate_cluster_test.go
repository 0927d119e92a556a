package action

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A push whose unit names a missing resource, and one whose object lacks
// a variable for its name, fail before anything is applied, annotated at
// the kustomization's entry and at the field holding the placeholder:
// what shows in a pull request's Files tab. The result output says the
// same.
func TestBuildAndSubstitutionErrorsAreAnnotated(t *testing.T) {
	ns := cluster.Namespace(t)
	g := newGitRepo(t)
	g.write("deploy/web/kustomization.yaml", "resources:\n- deployment.yaml\n- missing.yaml\n")
	g.write("deploy/web/deployment.yaml", deploymentYAML("1"))
	g.write("deploy/vars/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${APP_NAME}\ndata:\n  env: ${ENV}\n")
	head := g.commit("units")
	for _, tc := range []struct {
		unit, substitute string
		want             result.FileError
	}{
		{unit: "web", want: result.FileError{File: "deploy/web/kustomization.yaml", Line: 3}},
		{unit: "vars", substitute: "ENV=prod", want: result.FileError{File: "deploy/vars/settings.yaml", Line: 4}},
	} {
		t.Run(tc.unit, func(t *testing.T) {
			gh := newFakeGitHub(t)
			e := newRun(t, gh, "push", g.dir, map[string]string{pushed: head}).
				input("path", "deploy/"+tc.unit).input("name", tc.unit).input("target-namespace", ns).
				input("inventory-namespace", ns).input("kubeconfig", cluster.Kubeconfig)
			if tc.substitute != "" {
				e.input("substitute", tc.substitute)
			}
			res := e.run()
			if res.code != exitFail {
				t.Fatalf("exit %d, want a failure\n%s", res.code, res.stdout)
			}
			prefix := "::error file=" + tc.want.File + ",line=" + strconv.Itoa(tc.want.Line) + ",title=BuildFailed in " + tc.unit + "::"
			if strings.Count(res.stdout, prefix) != 1 {
				t.Errorf("the log lacks one %q:\n%s", prefix, res.stdout)
			}
			var got result.Result
			if err := json.Unmarshal([]byte(res.outputs["result"]), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.FileErrors) != 1 || got.FileErrors[0].File != tc.want.File || got.FileErrors[0].Line != tc.want.Line || got.Reason != result.ReasonBuildFailed {
				t.Errorf("result output: reason %s, file errors %+v; want %+v", got.Reason, got.FileErrors, tc.want)
			}
			if deps, err := cluster.Client(t).AppsV1().Deployments(ns).List(t.Context(), metav1.ListOptions{}); err != nil || len(deps.Items) > 0 {
				t.Errorf("a failed build applied something: %v", err)
			}
		})
	}
}
