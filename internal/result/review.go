package result

import "github.com/kustomize-deploy/kustomize-deploy/internal/object"

// Danger is a change a review flags before the API server would refuse
// it, or before it recreates or destroys something: the field at fault
// and what happens (see package danger for the rules).
type Danger struct {
	// Risk is the kind of risk in a word or two, as the risky list
	// counts them: "needs recreation", "data loss", "RBAC grant", "prune
	// off", "suspend".
	Risk string `json:"risk"`
	// Field is where the object changes, e.g. spec.volumeClaimTemplates;
	// the kind itself for a deletion.
	Field string `json:"field"`
	// Consequence says what follows, e.g. "cannot be changed: the object
	// must be recreated".
	Consequence string `json:"consequence"`
}

// String is the danger as one line: "spec.selector: cannot be changed: …".
func (d Danger) String() string { return d.Field + ": " + d.Consequence }

// ImageChange is one image a container changes from, to, in the objects
// that run it (Deployments, StatefulSets, Jobs, Pods, …).
type ImageChange struct {
	// Container is the container's name (init containers too).
	Container string `json:"container"`
	// From is the image before; empty for a new container or object.
	From string `json:"from,omitempty"`
	// To is the image after; empty for a container or object removed.
	To string `json:"to,omitempty"`
	// Objects run the container.
	Objects []object.ID `json:"objects"`
	// Release, for objects a chart rendered, is their HelmRelease.
	Release string `json:"release,omitempty"`
}

// Image is one image an object runs, for the images listing.
type Image struct {
	Image     string    `json:"image"`
	Container string    `json:"container"`
	Init      bool      `json:"init,omitempty"`
	Object    object.ID `json:"object"`
	Release   string    `json:"release,omitempty"`
}
