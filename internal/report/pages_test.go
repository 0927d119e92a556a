package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// thousandObjects is a 3-unit run changing about 1,000 objects: infra
// (a CRD, a Namespace, a ClusterRole), app (900 Deployments with ~450
// character diffs, 40 ConfigMaps and a PersistentVolumeClaim pruned) and
// db (a StatefulSet whose change needs recreation).
func thousandObjects() []*result.Result {
	diff := func(name string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "--- Deployment/shop/%s (live)\n+++ Deployment/shop/%s (desired)\n@@ -1,6 +1,6 @@\n", name, name)
		for i := range 6 {
			fmt.Fprintf(&b, "-  image%d: registry.example/shop/%s:1.0\n+  image%d: registry.example/shop/%s:1.1\n", i, name, i, name)
		}
		return b.String()
	}
	infra := &result.Result{Unit: "infra", Mode: result.ModeDiff, Revision: "abc123", Ready: true, Reason: result.ReasonDiffSucceed, Validation: result.ValidationServer, Entries: []result.Entry{
		{Object: object.ID{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}, Stage: result.StageDefinitions, Action: result.Configured, Source: "infra/crd.yaml",
			Diff: "--- CustomResourceDefinition/widgets.example.com (live)\n+++ CustomResourceDefinition/widgets.example.com (desired)\n@@ -1 +1 @@\n-  served: true\n+  served: false\n"},
		{Object: object.ID{Kind: "Namespace", Name: "shop"}, Stage: result.StageDefinitions, Action: result.Created, Source: "infra/ns.yaml",
			Diff: "--- Namespace/shop (live)\n+++ Namespace/shop (desired)\n@@ -0,0 +1 @@\n+name: shop\n"},
		{Object: object.ID{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "shop-admin"}, Stage: result.StageDefinitions, Action: result.Configured, Source: "infra/rbac.yaml",
			Diff: "--- ClusterRole/shop-admin (live)\n+++ ClusterRole/shop-admin (desired)\n@@ -1 +1 @@\n-  verbs: [get]\n+  verbs: ['*']\n"},
	}}
	app := &result.Result{Unit: "app", Mode: result.ModeDiff, Revision: "abc123", Ready: true, Reason: result.ReasonDiffSucceed, Validation: result.ValidationServer}
	for i := range 900 {
		name := fmt.Sprintf("web-%03d", i)
		app.Entries = append(app.Entries, result.Entry{Object: object.ID{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: name}, Stage: result.StageResources, Action: result.Configured, Source: "app/" + name + ".yaml", Diff: diff(name)})
	}
	web := result.ImageChange{Container: "web", From: "registry.example/shop/web:1.0", To: "registry.example/shop/web:1.1"}
	for i := range 900 {
		web.Objects = append(web.Objects, app.Entries[i].Object)
	}
	app.Images = []result.ImageChange{web}
	for i := range 40 {
		app.Entries = append(app.Entries, result.Entry{Object: object.ID{Kind: "ConfigMap", Namespace: "shop", Name: fmt.Sprintf("old-%02d", i)}, Stage: result.StagePrune, Action: result.Deleted})
	}
	app.Entries = append(app.Entries, result.Entry{Object: object.ID{Kind: "PersistentVolumeClaim", Namespace: "shop", Name: "data"}, Stage: result.StagePrune, Action: result.Deleted})
	db := failedBefore("db", result.ReasonValidationFailed, "StatefulSet/shop/db dry-run failed (db/db.yaml): spec: Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden",
		result.Entry{Object: object.ID{Group: "apps", Kind: "StatefulSet", Namespace: "shop", Name: "db"}, Stage: result.StageResources, Action: result.Failed, Source: "db/db.yaml", Recreate: true,
			Reason: "spec: Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden"})
	db.Mode = result.ModeDiff
	for _, r := range []*result.Result{infra, app, db} {
		r.Tally()
	}
	return []*result.Result{infra, app, db}
}

// The PR comment of a 1,000-object change reads in one screen: the image
// change first, the risky changes next, alike ones grouped ("40 ×
// ConfigMap deleted in shop"), a created Namespace not among them, and
// the 900 other changes one line per action, kind and namespace, their
// diffs in the job summary.
func TestMarkdownPagesThousandObjects(t *testing.T) {
	t.Parallel()
	results := thousandObjects()
	opts := prOptions
	opts.MaxBytes, opts.MaxPages = commentLimit, 5
	pages := MarkdownPages(results, opts)

	if len(pages) != 1 {
		t.Fatalf("%d pages, want 1", len(pages))
	}
	first := pages[0]
	if len(first) > 8<<10 {
		t.Errorf("the comment is %d bytes: more than a screen", len(first))
	}
	checkStructure(t, first, len(results), false)
	images, risky, app := strings.Index(first, "### 🖼️ Images"), strings.Index(first, "### ⚠️ Risky changes"), strings.Index(first, "### app")
	if images < 0 || risky < images || app < risky {
		t.Errorf("images, then risky changes, then units: at %d, %d, %d", images, risky, app)
	}
	for _, want := range []string{
		"- container `web`: `registry.example/shop/web:1.0` → `registry.example/shop/web:1.1` in `Deployment/shop/web-000`, `Deployment/shop/web-001`, `Deployment/shop/web-002` and 897 more · unit app",
		"- ⚠️ **prune** 40 × `ConfigMap` deleted in `shop` · unit app — `old-00`, `old-01`, `old-02` and 37 more",
		"CustomResourceDefinition/widgets.example.com", "ClusterRole/shop-admin", "PersistentVolumeClaim/shop/data", "StatefulSet/shop/db",
		"- 900 × configured `Deployment` in `shop`: `web-000`, `web-001`, `web-002` and 897 more",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("the comment lacks %q", want)
		}
	}
	if strings.Contains(first[risky:strings.Index(first, "### infra")], "Namespace/shop<") {
		t.Errorf("a created Namespace is listed as risky")
	}
	pages = MarkdownPages(results, MarkdownOptions{MaxBytes: commentLimit, MaxPages: 5})
	all := strings.Join(pages, "")
	for i := range 900 {
		if id := fmt.Sprintf("Deployment/shop/web-%03d", i); !strings.Contains(all, id) && !strings.Contains(all, "- and ") && !strings.Contains(all, " × configured `Deployment` in `shop`") {
			t.Errorf("%s is neither shown nor counted in the full report", id)
		}
	}
	pages = []string{first}
	golden(t, filepath.Join("testdata", "markdown-1000-pages.golden"), []byte(skeleton(pages)))
	// make screenshots renders the first page for docs/.
	if dir := os.Getenv("KUSTOMIZE_DEPLOY_SCREENSHOT_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "comment-1000-objects.md"), []byte(pages[0]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// skeleton is pages without their diffs: the lines a reviewer scans,
// with runs of collapsible diffs and of folded list lines counted.
func skeleton(pages []string) string {
	var b strings.Builder
	for n, p := range pages {
		fmt.Fprintf(&b, "=== page %d/%d: %d bytes\n", n+1, len(pages), len(p))
		fence, diffs, folded := "", 0, 0
		flush := func() {
			if diffs > 0 {
				fmt.Fprintf(&b, "[%d collapsed diffs]\n", diffs)
			}
			if folded > 0 {
				fmt.Fprintf(&b, "[%d folded lines]\n", folded)
			}
			diffs, folded = 0, 0
		}
		for _, line := range strings.Split(p, "\n") {
			switch {
			case fence != "":
				if strings.HasPrefix(line, fence) && strings.Trim(line, "`") == "" {
					fence = ""
				}
				continue
			case strings.HasPrefix(line, "```"):
				fence = line[:len(line)-len(strings.TrimLeft(line, "`"))]
				continue
			case line == "", line == "</details>":
				continue
			case strings.HasPrefix(line, "<details><summary>configured"):
				diffs++
				continue
			case strings.HasPrefix(line, "- configured `Deployment"):
				folded++
				continue
			}
			flush()
			b.WriteString(line + "\n")
		}
		flush()
	}
	return b.String()
}

// A forged report of thousands of risky items (each a prune, which is
// never left out of a comment, each in a namespace of its own so that
// none groups with another) still takes at most MaxPages comments:
// the last one says the rest is in the job summary.
func TestMarkdownPagesCapRiskyFloods(t *testing.T) {
	t.Parallel()
	r := &result.Result{Unit: "app", Mode: result.ModeDiff, Revision: "abc123", Ready: true, Reason: result.ReasonDiffSucceed}
	for i := range 5000 {
		r.Entries = append(r.Entries, result.Entry{Object: object.ID{Kind: "PersistentVolumeClaim", Namespace: fmt.Sprintf("shop-%04d", i), Name: fmt.Sprintf("data-%04d-%s", i, strings.Repeat("x", 100))},
			Stage: result.StagePrune, Action: result.Deleted, Source: "app/pvc.yaml"})
	}
	r.Tally()
	opts := prOptions
	opts.MaxBytes, opts.MaxPages = commentLimit, 10
	pages := MarkdownPages([]*result.Result{r}, opts)
	if len(pages) != 10 {
		t.Fatalf("%d pages, want the cap of 10", len(pages))
	}
	for n, p := range pages {
		if len(p) > commentLimit {
			t.Errorf("page %d is %d bytes", n+1, len(p))
		}
		units := 1
		if n > 0 {
			units = -1
		}
		checkStructure(t, p, units, false)
	}
	last := pages[9]
	if !strings.HasSuffix(last, "**Truncated:** this report takes more than 10 comments; the rest is in [the job summary](https://github.com/o/r/actions/runs/42).\n") {
		t.Errorf("the last page ends %q", last[max(0, len(last)-300):])
	}
	if !strings.Contains(pages[0], "data-0000-") {
		t.Errorf("the first risky item is not on page 1")
	}
}
