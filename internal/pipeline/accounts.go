package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// identity is who a unit's objects are applied as: a service account,
// impersonated (see connect), or, with no Name, the caller's own
// credentials. A Name without a Namespace is an account of the inventory
// namespace while that is not known (rendering without a cluster, with
// the kubeconfig's namespace for inventory namespace).
type identity struct{ Namespace, Name string }

func (i identity) String() string {
	switch {
	case i.Name == "":
		return "the caller's own credentials (no service account)"
	case i.Namespace == "":
		return "service account " + i.Name + " of the inventory namespace"
	}
	return "system:serviceaccount:" + i.Namespace + ":" + i.Name
}

// is says whether i is the account namespace/name; an unknown namespace
// is taken to be it (the run that knows it checks again).
func (i identity) is(namespace, name string) bool {
	return i.Name == name && (i.Namespace == "" || i.Namespace == namespace)
}

// appliesAs is the identity a unit with opts is applied as: its service
// account in ServiceAccountNamespace, else in the inventory namespace, as
// connect impersonates it.
func appliesAs(opts Options) identity {
	if opts.ServiceAccount == "" {
		return identity{}
	}
	return identity{Name: opts.ServiceAccount, Namespace: or(opts.ServiceAccountNamespace, opts.InventoryNamespace)}
}

// accountError is a HelmRelease whose spec.serviceAccountName is not the
// identity its unit applies as.
type accountError struct {
	Release object.ID
	// File and Line are where the HelmRelease is written (Line 0: not
	// found in it).
	File string
	Line int
	// Account is the release's spec.serviceAccountName, in its namespace;
	// As, the unit's identity. InConfig says the unit is a Flux
	// Kustomization of a configuration (else a unit run on its own), for
	// the way out.
	Account, As identity
	InConfig    bool
}

func (e *accountError) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	way := fmt.Sprintf("set the Kustomization's spec.serviceAccountName to %s, with the Kustomization in namespace %s (Flux impersonates its account in its own namespace)",
		e.Account.Name, e.Account.Namespace)
	if !e.InConfig {
		way = fmt.Sprintf("run it with service-account %s and inventory-namespace %s", e.Account.Name, e.Account.Namespace)
	}
	return fmt.Sprintf("HelmRelease %s/%s (%s): spec.serviceAccountName %s: helm-controller installs the release as %s, and this unit applies as %s; "+
		"its chart's objects are not applied with other rights than the release's. Apply the unit as that account: %s; or remove the HelmRelease's serviceAccountName to install it as the unit",
		e.Release.Namespace, e.Release.Name, where, e.Account.Name, e.Account, e.As, way)
}

// checkReleaseAccounts refuses the HelmReleases among objs (sources maps
// each to its file) whose spec.serviceAccountName is not as, the identity
// their unit applies as. helm-controller installs a release as that
// account, in the HelmRelease's namespace: applying its chart's objects
// with the unit's rights instead could do what the account may not (a
// tenant's release writing outside its namespace). One unit is applied as
// one identity (its inventory, prune and waits with it), so a release is
// refused rather than applied apart. A release without the field is
// installed as the unit, as helm-controller installs it as itself (or its
// --default-service-account, which has no counterpart here). lineOf
// gives the line of an object in a file, for the message and the
// annotation (each refusal is a build.FileError).
func checkReleaseAccounts(objs []*unstructured.Unstructured, sources map[object.ID]string, as identity, inConfig bool, lineOf func(file string, id object.ID) int) error {
	var errs []error
	for _, u := range objs {
		if !helm.IsRelease(u) {
			continue
		}
		rel, err := helm.ReadRelease(u)
		if err != nil || rel.ServiceAccountName == "" || as.is(rel.Namespace, rel.ServiceAccountName) {
			continue // a release that cannot be read is refused by helm.Expand
		}
		id := object.IDOf(u)
		id.Namespace = rel.Namespace
		e := &accountError{Release: id, File: sources[object.IDOf(u)], Account: identity{Namespace: rel.Namespace, Name: rel.ServiceAccountName}, As: as, InConfig: inConfig}
		if e.File == "" {
			errs = append(errs, e)
			continue
		}
		e.Line = lineOf(e.File, object.IDOf(u))
		// Annotated at the HelmRelease (see fileErrors).
		errs = append(errs, &build.FileError{File: e.File, Line: e.Line, Err: e})
	}
	return errors.Join(errs...)
}

// linesIn returns, for files under root, the line of an object in one
// (object.Lines), reading each file once; 0 when it cannot be read.
func linesIn(root string) func(file string, id object.ID) int {
	files := map[string]func(object.ID) int{}
	return func(file string, id object.ID) int {
		lines, ok := files[file]
		if !ok {
			path := file
			if !filepath.IsAbs(path) {
				path = filepath.Join(root, filepath.FromSlash(file))
			}
			data, _ := os.ReadFile(path) // no file, no line
			lines = object.Lines(data)
			files[file] = lines
		}
		return lines(id)
	}
}
