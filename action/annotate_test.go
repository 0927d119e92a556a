package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"

	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A failed object is annotated on its file and the line its document
// starts, so it shows in the pull request's Files tab; an object its
// file does not hold as written (a generator's) on the file alone.
func TestAnnotationsNameFileAndLine(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "deploy", "web"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, "deploy", "web", "app.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# the service\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec: {ports: [{port: 99999}]}\n")
	var log strings.Builder
	r := &runner{masker: mask.New(), ev: &event{WorkspaceDir: ws},
		gha: githubactions.New(githubactions.WithWriter(&log), githubactions.WithGetenv(func(string) string { return "" }))}
	r.annotate(&result.Result{Unit: "web", Reason: result.ReasonValidationFailed, Message: "1 object refused", Entries: []result.Entry{
		{Object: object.ID{Kind: "Service", Namespace: "shop", Name: "web"}, Source: "deploy/web/app.yaml", Action: result.Failed, Reason: "spec.ports[0].port: Invalid value: 99999"},
		{Object: object.ID{Kind: "ConfigMap", Namespace: "shop", Name: "web-settings-5f7d"}, Source: "deploy/web/app.yaml", Action: result.Failed, Reason: "generated"},
		{Object: object.ID{Kind: "ConfigMap", Namespace: "shop", Name: "a"}, Source: "deploy/web/app.yaml", Action: result.Unchanged},
	}})
	for _, want := range []string{
		"::error file=deploy/web/app.yaml,line=7::spec.ports[0].port: Invalid value: 99999\n",
		"::error file=deploy/web/app.yaml::generated\n",
		"::error::web: ValidationFailed: 1 object refused\n",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("annotations lack %q:\n%s", want, log.String())
		}
	}
	if strings.Count(log.String(), "::error") != 3 {
		t.Errorf("want 3 annotations:\n%s", log.String())
	}
}
