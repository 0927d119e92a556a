package report

import (
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// chartBump is a unit whose chart bump relabels two objects of its
// release and changes an image; a third relabelled object also has
// changes pending since the last apply, and one of the unit's own objects
// is relabelled by a fold pointer.
func chartBump() *result.Result {
	cm := func(name string) object.ID { return object.ID{Kind: "ConfigMap", Namespace: "web", Name: name} }
	deploy := object.ID{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "web"}
	r := &result.Result{Unit: "web", Mode: result.ModeDiff, Revision: "abc123", Ready: true, Reason: result.ReasonDiffSucceed,
		Releases: []result.Release{{HelmRelease: "HelmRelease/web/web", Chart: "web", Version: "1.1.0", FromVersion: "1.0.0", Objects: []object.ID{cm("a"), cm("b"), cm("c"), deploy}}},
		Images:   []result.ImageChange{{Container: "web", From: "web:1.0", To: "web:1.1", Objects: []object.ID{deploy}, Release: "HelmRelease/web/web"}},
		Entries: []result.Entry{
			{Object: cm("a"), Action: result.Configured, Release: "HelmRelease/web/web", Noise: true, Diff: "-    helm.sh/chart: web-1.0.0\n+    helm.sh/chart: web-1.1.0\n"},
			{Object: cm("b"), Action: result.Configured, Release: "HelmRelease/web/web", Noise: true, Diff: "-    helm.sh/chart: web-1.0.0\n+    helm.sh/chart: web-1.1.0\n"},
			{Object: cm("c"), Action: result.Configured, Release: "HelmRelease/web/web", Noise: true, Pending: true, Diff: "-  greeting: hi\n+  greeting: hello\n"},
			{Object: deploy, Action: result.Configured, Release: "HelmRelease/web/web", Diff: "-        image: web:1.0\n+        image: web:1.1\n"},
			{Object: cm("own"), Action: result.Configured, Noise: true, Diff: "-    example.com/build: '1'\n+    example.com/build: '2'\n"},
		}}
	r.Tally()
	return r
}

func TestMarkdownFoldsNoise(t *testing.T) {
	t.Parallel()
	comment := Markdown([]*result.Result{chartBump()}, prOptions)
	for _, want := range []string{
		"### 🖼️ Images\n\n- container `web`: `web:1.0` → `web:1.1` in `Deployment/web/web` · release HelmRelease/web/web\n",
		"- HelmRelease/web/web, chart web 1.0.0 → 1.1.0: 2 objects relabelled: `ConfigMap/web/a`, `ConfigMap/web/b`\n",
		"- the unit's own objects: 1 object relabelled: `ConfigMap/web/own`\n",
		"<code>ConfigMap/web/c</code>", // pending changes keep their diff
		"<code>Deployment/web/web</code>",
	} {
		if !strings.Contains(comment, want) {
			t.Errorf("the comment lacks %q:\n%s", want, comment)
		}
	}
	if strings.Contains(comment, "<code>ConfigMap/web/a</code>") {
		t.Errorf("a relabelled object has its own diff:\n%s", comment)
	}
	summary := Markdown([]*result.Result{chartBump()}, MarkdownOptions{})
	if !strings.Contains(summary, "<code>ConfigMap/web/a</code>") || strings.Contains(summary, "relabelled") {
		t.Errorf("the job summary folds noise:\n%s", summary)
	}
}

// Risky entries alike are one line in a comment, naming a few; the job
// summary names them all. A danger names its field and consequence.
func TestMarkdownGroupsRiskyLines(t *testing.T) {
	t.Parallel()
	r := &result.Result{Unit: "app", Mode: result.ModeDiff, Ready: true, Reason: result.ReasonDiffSucceed}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		r.Entries = append(r.Entries, result.Entry{Object: object.ID{Kind: "ConfigMap", Namespace: "shop", Name: n}, Stage: result.StagePrune, Action: result.Deleted})
	}
	r.Entries = append(r.Entries,
		result.Entry{Object: object.ID{Kind: "Namespace", Name: "old"}, Stage: result.StagePrune, Action: result.Deleted,
			Dangers: []result.Danger{{Risk: "data loss", Field: "Namespace", Consequence: "deletes every object in the Namespace"}}},
		result.Entry{Object: object.ID{Kind: "Namespace", Name: "new"}, Stage: result.StageDefinitions, Action: result.Created},
		result.Entry{Object: object.ID{Group: "apps", Kind: "StatefulSet", Namespace: "shop", Name: "db"}, Action: result.Configured, Diff: "-  x\n+  y\n",
			Dangers: []result.Danger{{Risk: "needs recreation", Field: "spec.volumeClaimTemplates", Consequence: "cannot be changed: the object must be recreated"}}})
	r.Tally()
	comment := Markdown([]*result.Result{r}, prOptions)
	for _, want := range []string{
		"**⚠️ 7 risky changes** (6 prune, 1 needs recreation)",
		"- ⚠️ **prune** 5 × `ConfigMap` deleted in `shop` — `a`, `b`, `c` and 2 more\n",
		"- ⚠️ **prune** deleted `Namespace/old`: `Namespace` deletes every object in the Namespace\n",
		"⚠️ <b>needs recreation</b> configured <code>StatefulSet/shop/db</code>: <code>spec.volumeClaimTemplates</code> cannot be changed: the object must be recreated",
	} {
		if !strings.Contains(comment, want) {
			t.Errorf("the comment lacks %q:\n%s", want, comment)
		}
	}
	if strings.Contains(comment, "`Namespace/new`") && strings.Index(comment, "`Namespace/new`") < strings.Index(comment, "### app") {
		t.Errorf("a created Namespace is listed as risky:\n%s", comment)
	}
	summary := Markdown([]*result.Result{r}, MarkdownOptions{})
	if !strings.Contains(summary, "5 × `ConfigMap` deleted in `shop` — `a`, `b`, `c`, `d`, `e`") {
		t.Errorf("the job summary does not name every prune:\n%s", summary)
	}
}
