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

// The files a failed build or substitution names are annotated at their
// line (or on the file alone when only it is known), titled with the
// unit's reason, values the run masks hidden.
func TestAnnotationsOfFileErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fe   result.FileError
		want string
	}{
		{name: "file and line",
			fe:   result.FileError{File: "apps/web/kustomization.yaml", Line: 3, Message: `apps/web/kustomization.yaml: resources entry "missing.yaml": apps/web/missing.yaml does not exist`},
			want: `::error file=apps/web/kustomization.yaml,line=3,title=BuildFailed in web::apps/web/kustomization.yaml: resources entry "missing.yaml": apps/web/missing.yaml does not exist` + "\n"},
		{name: "file alone",
			fe:   result.FileError{File: "apps/base/kustomization.yaml", Message: "kustomize build of apps/web failed: no matches for Id Deployment"},
			want: "::error file=apps/base/kustomization.yaml,title=BuildFailed in web::kustomize build of apps/web failed: no matches for Id Deployment\n"},
		{name: "a secret value masked",
			fe:   result.FileError{File: "apps/web/cm.yaml", Line: 9, Message: "ConfigMap/shop/web in apps/web/cm.yaml: the substituted YAML is invalid near hunter2-token"},
			want: "::error file=apps/web/cm.yaml,line=9,title=BuildFailed in web::ConfigMap/shop/web in apps/web/cm.yaml: the substituted YAML is invalid near ***\n"},
		{name: "a multi-line message",
			fe:   result.FileError{File: "apps/web/a.yaml", Line: 11, Message: "apps/web/a.yaml: document 2:\nyaml: line 6: did not find expected ','"},
			want: "::error file=apps/web/a.yaml,line=11,title=BuildFailed in web::apps/web/a.yaml: document 2:%0Ayaml: line 6: did not find expected ','\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var log strings.Builder
			m := mask.New()
			m.Add("hunter2-token")
			r := &runner{masker: m, ev: &event{WorkspaceDir: t.TempDir()},
				gha: githubactions.New(githubactions.WithWriter(&log), githubactions.WithGetenv(func(string) string { return "" }))}
			r.annotate(&result.Result{Unit: "web", Reason: result.ReasonBuildFailed, Message: "build failed", Entries: []result.Entry{}, FileErrors: []result.FileError{tc.fe}})
			lines := strings.SplitAfter(log.String(), "\n")
			if len(lines) != 3 || lines[0] != tc.want || lines[1] != "::error::web: BuildFailed: build failed\n" {
				t.Errorf("annotations:\n%s\nwant first:\n%s", log.String(), tc.want)
			}
		})
	}
}
