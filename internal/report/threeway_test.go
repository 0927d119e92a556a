package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

const (
	prBase = "1111111111111111111111111111111111111111"
	prHead = "2222222222222222222222222222222222222222"
	// deployed is the revision last applied, before the PR base: main
	// moved on without a deploy.
	deployed = "3333333333333333333333333333333333333333"
)

// threeWayUnits is the diff of one pull request over three units:
//   - web: the PR raises replicas, which someone also scaled by hand;
//     an image was changed and a ConfigMap deleted by hand, which merging
//     puts back;
//   - api: the PR deletes a PVC (a prune), and main holds a change not
//     yet deployed;
//   - db: the PR suspends it.
func threeWayUnits() []*result.Result {
	id := func(kind, name string) object.ID { return object.ID{Kind: kind, Namespace: "shop", Name: name} }
	change := func(id object.ID, from, to string) string {
		return "--- " + id.String() + " (base)\n+++ " + id.String() + " (head)\n@@ -1 +1 @@\n-" + from + "\n+" + to + "\n"
	}
	live := func(id object.ID, from, to string) string {
		return "--- " + id.String() + " (live)\n+++ " + id.String() + " (desired)\n@@ -1 +1 @@\n-" + from + "\n+" + to + "\n"
	}
	webDeploy, webConfig := id("Deployment", "web"), id("ConfigMap", "web-flags")
	web := &result.Result{Unit: "web", Mode: result.ModeDiff, Revision: prHead, Base: prBase, AppliedRevision: prBase,
		Ready: true, Reason: result.ReasonDiffSucceed, Validation: result.ValidationServer, Duration: "1.2s",
		Entries: []result.Entry{
			{Object: webDeploy, Source: "apps/web/deployment.yaml", Stage: result.StageResources, Action: result.Configured,
				Diff:   live(webDeploy, "  replicas: 5", "  replicas: 3") + "-        image: web:1.4.3-hotfix\n+        image: web:1.4.2\n",
				Change: change(webDeploy, "  replicas: 2", "  replicas: 3"),
				Drift: []result.FieldDrift{
					{Field: "spec.replicas", Live: "5", Applied: "2", Merged: "3"},
					{Field: "spec.template.spec.containers[0].image", Live: "web:1.4.3-hotfix", Applied: "web:1.4.2", Merged: "web:1.4.2", Reverted: true},
				}},
			{Object: webConfig, Source: "apps/web/flags.yaml", Stage: result.StageResources, Action: result.Created,
				Diff: live(webConfig, "", "  beta: \"on\""), Gone: true},
		}}
	apiPVC, apiConfig := id("PersistentVolumeClaim", "api-cache"), id("ConfigMap", "api")
	api := &result.Result{Unit: "api", Mode: result.ModeDiff, Revision: prHead, Base: prBase, AppliedRevision: deployed,
		Ready: true, Reason: result.ReasonDiffSucceed, Validation: result.ValidationServer, Duration: "0.9s",
		Entries: []result.Entry{
			{Object: apiConfig, Source: "apps/api/config.yaml", Stage: result.StageResources, Action: result.Configured,
				Diff: live(apiConfig, "  timeout: 10s", "  timeout: 30s")},
			{Object: apiPVC, Source: "apps/api/cache.yaml", Stage: result.StagePrune, Action: result.Deleted,
				Change: "--- " + apiPVC.String() + " (base)\n+++ " + apiPVC.String() + " (head)\n@@ -1 +0,0 @@\n-kind: PersistentVolumeClaim\n"},
		}}
	db := &result.Result{Unit: "db", Mode: result.ModeDiff, Revision: prHead, AppliedRevision: deployed,
		Reason: result.ReasonSuspended, Message: "suspended (spec.suspend): not run", Suspension: result.Suspends, Entries: []result.Entry{}}
	for _, r := range []*result.Result{web, api, db} {
		r.Tally()
	}
	return []*result.Result{web, api, db}
}

func TestThreeWayGolden(t *testing.T) {
	t.Parallel()
	results := threeWayUnits()
	golden(t, filepath.Join("testdata", "markdown-threeway-units.golden"), []byte(Markdown(results, MarkdownOptions{
		Title: "kustomize-deploy diff of clusters/prod (3 units)", Marker: "<!-- kustomize-deploy:config=clusters/prod -->", RunURL: "https://github.com/o/r/actions/runs/42",
	})))
	var text bytes.Buffer
	Text(&text, results[0], true)
	Text(&text, results[1], true)
	golden(t, filepath.Join("testdata", "text-threeway.golden"), text.Bytes())
}

// What a reviewer must not miss stays in the comment however little room
// there is: every live change merging reverts, and every risky item.
func TestThreeWayKeepsRevertsWhenDiffsAreLeftOut(t *testing.T) {
	t.Parallel()
	results := threeWayUnits()
	for i := range results[0].Entries {
		results[0].Entries[i].Change += strings.Repeat("+ padding line\n", 400)
	}
	pages := MarkdownPages(results, MarkdownOptions{MaxBytes: 4000, MaxPages: 1})
	if len(pages) != 1 {
		t.Fatalf("%d pages", len(pages))
	}
	for _, want := range []string{
		"`spec.template.spec.containers[0].image`: live `web:1.4.3-hotfix`, Git `web:1.4.2`",
		"`ConfigMap/shop/web-flags` was deleted in the cluster",
		"`spec.replicas`: live `5`, base `2`, this PR `3`",
		"PersistentVolumeClaim/shop/api-cache",
		"this PR suspends unit db",
	} {
		if !strings.Contains(pages[0], want) {
			t.Errorf("the page lacks %q:\n%s", want, pages[0])
		}
	}
	if strings.Contains(pages[0], "padding line") {
		t.Errorf("the oversized diff was kept in a 4,000-byte page")
	}
}

// A unit whose base could not be rendered says so, and shows the two-way
// diff.
func TestNotesAreShown(t *testing.T) {
	t.Parallel()
	r := &result.Result{Unit: "db", Mode: result.ModeDiff, Ready: true, Reason: result.ReasonDiffSucceed,
		Notes: []string{"no three-way diff: rendering the PR base: commit 111111111111 is not in the checkout"}, Entries: []result.Entry{}}
	md := Markdown([]*result.Result{r}, MarkdownOptions{})
	if !strings.Contains(md, "> **Note:** no three-way diff: rendering the PR base: commit 111111111111 is not in the checkout") {
		t.Errorf("markdown:\n%s", md)
	}
	var text bytes.Buffer
	Text(&text, r, true)
	if !strings.Contains(text.String(), "note: no three-way diff") {
		t.Errorf("text:\n%s", text.String())
	}
}

// An object that drifted and also changes for reasons other than the PR
// shows its live diff under "Also applied on merge": the drift section
// alone would hide the rest.
func TestDriftedObjectWithPendingChangesShowsItsDiff(t *testing.T) {
	t.Parallel()
	id := object.ID{Kind: "ConfigMap", Namespace: "shop", Name: "web"}
	r := &result.Result{Unit: "web", Mode: result.ModeDiff, Revision: prHead, Base: prBase, AppliedRevision: prBase, Ready: true, Reason: result.ReasonDiffSucceed,
		Entries: []result.Entry{{Object: id, Stage: result.StageResources, Action: result.Configured, Pending: true,
			Diff:  "--- ConfigMap/shop/web (live)\n+++ ConfigMap/shop/web (desired)\n@@ -1,2 +1,2 @@\n-  color: red\n+  color: blue\n-  token: old\n+  token: new\n",
			Drift: []result.FieldDrift{{Field: "data.color", Live: "red", Applied: "blue", Merged: "blue", Reverted: true}}}}}
	r.Tally()
	md := Markdown([]*result.Result{r}, MarkdownOptions{})
	for _, want := range []string{"`data.color`: live `red`, Git `blue`", "**Also applied on merge**", "+  token: new"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	r.Entries[0].Pending = false
	if md := Markdown([]*result.Result{r}, MarkdownOptions{}); strings.Contains(md, "Also applied on merge") {
		t.Errorf("a drifted object without other changes is shown twice:\n%s", md)
	}
}
