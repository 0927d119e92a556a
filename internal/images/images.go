// Package images reads the container images objects run: the pod
// templates of the workload kinds Kubernetes defines (Pods, Deployments,
// StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs,
// CronJobs), containers and init containers. Custom resources' image
// fields are not guessed. It compares two renders of objects for a
// review: which images change, from what to what, in which objects.
package images

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// podSpec is where each workload kind ("group/Kind") keeps its pod spec.
var podSpec = map[string][]string{
	"/Pod":                   {"spec"},
	"/ReplicationController": {"spec", "template", "spec"},
	"apps/Deployment":        {"spec", "template", "spec"},
	"apps/StatefulSet":       {"spec", "template", "spec"},
	"apps/DaemonSet":         {"spec", "template", "spec"},
	"apps/ReplicaSet":        {"spec", "template", "spec"},
	"batch/Job":              {"spec", "template", "spec"},
	"batch/CronJob":          {"spec", "jobTemplate", "spec", "template", "spec"},
}

// Container is one container of an object and its image.
type Container struct {
	Name, Image string
	Init        bool
}

// Of lists u's containers, init containers first, as its pod spec orders
// them; none for a kind that is not a workload Kubernetes defines.
func Of(u *unstructured.Unstructured) []Container {
	if u == nil {
		return nil
	}
	gvk := u.GroupVersionKind()
	path, ok := podSpec[gvk.Group+"/"+gvk.Kind]
	if !ok {
		return nil
	}
	var out []Container
	for _, list := range []string{"initContainers", "containers"} {
		cs, _, _ := unstructured.NestedSlice(u.Object, append(append([]string(nil), path...), list)...)
		for _, c := range cs {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			name, _ := m["name"].(string)
			image, _ := m["image"].(string)
			out = append(out, Container{Name: name, Image: image, Init: list == "initContainers"})
		}
	}
	return out
}

// List lists the images of objs, in their order; release names the
// HelmRelease of an object a chart rendered ("" for none).
func List(objs []*unstructured.Unstructured, release func(object.ID) string) []result.Image {
	var out []result.Image
	for _, u := range objs {
		id := object.IDOf(u)
		for _, c := range Of(u) {
			out = append(out, result.Image{Image: c.Image, Container: c.Name, Init: c.Init, Object: id, Release: release(id)})
		}
	}
	return out
}

// Change is one object's image change, before grouping.
type Change struct {
	Object    object.ID
	Container string
	From, To  string
}

// Changed lists the containers of one object whose image changes from
// old to now (nil old: created, nil now: deleted), by container name.
func Changed(id object.ID, old, now *unstructured.Unstructured) []Change {
	before := map[string]string{}
	for _, c := range Of(old) {
		before[c.Name] = c.Image
	}
	var out []Change
	seen := map[string]bool{}
	for _, c := range Of(now) {
		seen[c.Name] = true
		if from, ok := before[c.Name]; !ok || from != c.Image {
			out = append(out, Change{Object: id, Container: c.Name, From: from, To: c.Image})
		}
	}
	for _, c := range Of(old) {
		if !seen[c.Name] {
			out = append(out, Change{Object: id, Container: c.Name, From: c.Image})
		}
	}
	return out
}

// Group joins changes of the same container, from the same image to the
// same one, in the same release, naming every object; release names the
// HelmRelease of an object. In the order they first appear.
func Group(changes []Change, release func(object.ID) string) []result.ImageChange {
	type key struct{ release, container, from, to string }
	at := map[key]int{}
	var out []result.ImageChange
	for _, c := range changes {
		k := key{release(c.Object), c.Container, c.From, c.To}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, result.ImageChange{Container: c.Container, From: c.From, To: c.To, Release: k.release})
		}
		out[i].Objects = append(out[i].Objects, c.Object)
	}
	for _, ic := range out {
		sort.Slice(ic.Objects, func(i, j int) bool { return ic.Objects[i].Less(ic.Objects[j]) })
	}
	return out
}
