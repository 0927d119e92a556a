package object

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// One cause shared by many objects reads as one line; causes keep the
// order they first appear in.
func TestByCause(t *testing.T) {
	t.Parallel()
	cm := func(name string) Located {
		return Located{ID: ID{Kind: "ConfigMap", Namespace: "argocd", Name: name}, Source: name + ".yaml"}
	}
	const missing = "namespace argocd not found, and this unit does not create it"
	var failures []Failure
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		failures = append(failures, Failure{Located: cm(name), Cause: missing})
	}
	failures = append(failures[:1], append([]Failure{{Located: Located{ID: ID{Kind: "Job", Name: "x"}}, Cause: "forbidden"}}, failures[1:]...)...)
	failures = append(failures, Failure{Located: cm("f"), Cause: "too large"}, Failure{Located: cm("g"), Cause: "too large"})
	var got []string
	for _, g := range ByCause(failures) {
		got = append(got, g.String())
	}
	want := []string{
		missing + " — 5 objects, e.g. ConfigMap/argocd/a (a.yaml), ConfigMap/argocd/b (b.yaml), ConfigMap/argocd/c (c.yaml) and 2 more",
		"Job/x: forbidden",
		"too large — 2 objects: ConfigMap/argocd/f (f.yaml), ConfigMap/argocd/g (g.yaml)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}
