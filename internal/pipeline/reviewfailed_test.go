package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// entryFor is res's entry of id, nil when it has none.
func entryFor(res *result.Result, id object.ID) *result.Entry {
	for i := range res.Entries {
		if res.Entries[i].Object == id {
			return &res.Entries[i]
		}
	}
	return nil
}

// A pull request's diff whose dry-run fails is still reviewed offline:
// the image it changes, and the Namespace it deletes as a danger, beside
// the failure; the failure stays the result.
func TestFailedDryRunIsStillReviewed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		dryRunErr error
		images    int
		dangers   bool
	}{
		{"the dry-run fails", errors.New(`admission webhook "policy.example" denied the request`), 1, true},
		{"the dry-run passes", nil, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shop := obj("v1", "Namespace", "", "shop")
			f := newFixture(t, nil, deployment(2, "web:2", ""))
			f.baseRoot, f.baseObjs = t.TempDir(), []*unstructured.Unstructured{deployment(2, "web:1", ""), shop}
			f.applier.dryRunErr = tc.dryRunErr
			at := func(_ context.Context, rev string, _ paths.Dir) (*paths.Dir, error) {
				if rev != "base-rev" {
					t.Errorf("rendered at %q", rev)
				}
				return &paths.Dir{Root: f.baseRoot, Rel: "."}, nil
			}
			res, err := f.run(result.ModeDiff, Options{Base: "base-rev", At: at})
			if (err != nil) != (tc.dryRunErr != nil) || res.Failed() != (tc.dryRunErr != nil) {
				t.Fatalf("err %v, failed %t", err, res.Failed())
			}
			if len(res.Images) != tc.images || res.Images[0].From != "web:1" || res.Images[0].To != "web:2" {
				t.Errorf("images %+v, want web:1 → web:2", res.Images)
			}
			if tc.dryRunErr == nil {
				return // the prune plan has no Namespace: it was never applied
			}
			e := entryFor(res, object.IDOf(shop))
			if e == nil || len(e.Dangers) == 0 || e.Action != result.Deleted || !strings.Contains(e.Reason, "dry-run failed") {
				t.Fatalf("the deleted Namespace's entry: %+v", e)
			}
			if e.Diff != "" {
				t.Errorf("an entry not dry-run carries a diff: %q", e.Diff)
			}
			if web := entryFor(res, object.IDOf(deployment(2, "", ""))); web == nil || web.Action != result.Failed {
				t.Errorf("the Deployment's entry: %+v", web)
			}
		})
	}
}

// An offline diff whose head does not validate still compares it with
// the base: its entries, images and dangers are reported beside the
// validation failure.
func TestInvalidOfflineDiffIsStillReviewed(t *testing.T) {
	base := t.TempDir()
	files := map[string]string{
		"kustomization.yaml": "resources: [web.yaml, ns.yaml]\n",
		"web.yaml":           "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: 'web:1'}]}\n",
		"ns.yaml":            "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(base, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	head := deployment(2, "web:2", "")
	head.Object["spec"].(map[string]any)["replicas"] = "two" // not an integer
	rendered := &Rendered{Objects: []*unstructured.Unstructured{head}, Sources: map[object.ID]string{object.IDOf(head): "web.yaml"}}
	checkout := func(context.Context) (*paths.Dir, func(), error) {
		return &paths.Dir{Root: base, Path: base, Rel: "."}, func() {}, nil
	}
	opts := Options{Name: "web", Dir: paths.Dir{Root: t.TempDir(), Rel: "."}, Validation: result.ValidationClient}
	res, err := DiffOfflineRendered(context.Background(), opts, rendered, checkout)
	if err == nil || res.Reason != result.ReasonValidationFailed || !strings.Contains(res.Message, "replicas") {
		t.Fatalf("err %v, reason %s: %s", err, res.Reason, res.Message)
	}
	if len(res.Images) != 1 || res.Images[0].From != "web:1" || res.Images[0].To != "web:2" {
		t.Errorf("images %+v, want web:1 → web:2", res.Images)
	}
	if e := entryFor(res, object.ID{Kind: "Namespace", Name: "shop"}); e == nil || e.Action != result.Deleted || len(e.Dangers) == 0 {
		t.Errorf("the deleted Namespace's entry: %+v", e)
	}
}
