package pipeline

import (
	"io"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A release the run's tags leave out keeps what the unit recorded of it
// and what it renders now, and its record; the rest is as rendered. An
// inventory from before entries named their release prunes nothing.
func TestHold(t *testing.T) {
	t.Parallel()
	cm := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("ns")
		u.SetName(name)
		return u
	}
	id := func(name string) object.ID { return object.ID{Kind: "ConfigMap", Namespace: "ns", Name: name} }
	chart := func(name string, tags []string, objs ...string) helm.Chart {
		c := helm.Chart{Release: helm.Reference{Kind: "HelmRelease", Namespace: "ns", Name: name}, Namespace: "ns", ReleaseName: name, Tags: tags}
		for _, o := range objs {
			c.Objects = append(c.Objects, id(o))
		}
		return c
	}
	newDesired := func() *desired {
		objs := []*unstructured.Unstructured{cm("plain"), cm("front-1"), cm("back-1")}
		d := &desired{Rendered: &Rendered{Objects: objs, Charts: []helm.Chart{chart("front", []string{"frontend"}, "front-1"), chart("back", []string{"backend"}, "back-1")}}, entries: inventoryEntries(objs)}
		markReleases(d.entries, d.Charts)
		return d
	}
	last := &inventory.Inventory{
		Entries: []inventory.Entry{{ID: id("plain")}, {ID: id("front-1"), Release: "HelmRelease/ns/front"}, {ID: id("back-old"), Release: "HelmRelease/ns/back", ResourceVersion: "7"}, {ID: id("gone")}},
		Status:  inventory.Status{Releases: []inventory.Release{{Name: "ns/front", Digest: "f"}, {Name: "ns/back", Digest: "b"}}},
	}
	names := func(entries []inventory.Entry) []string {
		var out []string
		for _, e := range entries {
			out = append(out, e.ID.Name)
		}
		slices.Sort(out)
		return out
	}

	r := &run{opts: Options{ExcludeTags: []string{"backend"}, Progress: io.Discard}, last: last, res: &result.Result{}}
	d := newDesired()
	r.hold(d)
	if got := names(d.entries); !slices.Equal(got, []string{"front-1", "plain"}) || len(d.Objects) != 2 || len(d.Charts) != 1 {
		t.Errorf("desired %q (%d objects, %d charts); want plain and front's", got, len(d.Objects), len(d.Charts))
	}
	if got := names(r.held); !slices.Equal(got, []string{"back-1", "back-old"}) {
		t.Errorf("held %q, want back's recorded and rendered objects", got)
	}
	if len(r.heldRecords) != 1 || r.heldRecords[0].Digest != "b" {
		t.Errorf("held records %+v, want back's", r.heldRecords)
	}

	// A unit's own tags count as its releases': included, back stays in.
	r = &run{opts: Options{IncludeTags: []string{"web"}, UnitTags: []string{"web"}, Progress: io.Discard}, last: last, res: &result.Result{}}
	d = newDesired()
	r.hold(d)
	if len(r.held) != 0 || len(d.Charts) != 2 {
		t.Errorf("the unit's tag included: held %q, %d charts", names(r.held), len(d.Charts))
	}

	// Recorded before entries named their release: nothing is pruned.
	legacy := &inventory.Inventory{Entries: []inventory.Entry{{ID: id("plain")}, {ID: id("back-old")}, {ID: id("gone")}}}
	r = &run{opts: Options{ExcludeTags: []string{"backend"}, Progress: io.Discard}, last: legacy, res: &result.Result{}}
	r.hold(newDesired())
	if got := names(r.held); !slices.Equal(got, []string{"back-1", "back-old", "gone"}) || !strings.Contains(strings.Join(r.res.Notes, "\n"), "none is pruned in this run") {
		t.Errorf("legacy inventory: held %q, notes %q", got, r.res.Notes)
	}
}
