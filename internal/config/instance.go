package config

import (
	"encoding/json"
	"fmt"
	"strings"

	yaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// Flux Operator (fluxcd.controlplane.io) installs Flux from a FluxInstance
// and, with its spec.sync, makes Flux's own sync: a source and a
// Kustomization, both named spec.sync.name, else after the instance's
// namespace, that apply spec.sync.path (interval 10m, prune). In an
// operator-managed fleet that pair is in no file, so the FluxInstance is
// read as gotk-sync.yaml is: its source joins the configuration's, and
// its Kustomization is a unit (Instance set), Flux's own sync when it
// applies the configuration's directory, whatever its source's kind.
const (
	operatorGroup    = "fluxcd.controlplane.io"
	fluxInstanceKind = "FluxInstance"
)

// isInstance says whether apiVersion and kind are a FluxInstance.
func isInstance(apiVersion, kind string) bool {
	return kind == fluxInstanceKind && groupOf(apiVersion) == operatorGroup
}

// instance is a FluxInstance's sync, as read: the source and the
// Kustomization the operator would make.
type instance struct {
	ref    Ref
	source *Source
	// kustomization is the Kustomization, as the operator writes it.
	kustomization []byte
	// multitenant is spec.cluster.multitenant (see instanceLockdown).
	multitenant bool
}

// instance reads a FluxInstance's spec.sync; nil when it has none. Only
// what names and tells apart the sync's source is read: the rest of the
// FluxInstance is the operator's business, which this run stands in for.
func (d *decoder) instance(top *fields) *instance {
	d.object = fluxInstanceKind
	ref := d.metadata(top)
	spec := top.object("spec")
	if spec == nil {
		return nil
	}
	sync := spec.object("sync")
	if sync == nil {
		return nil
	}
	kind := sync.oneOf("kind", GitRepositoryKind, OCIRepositoryKind, BucketKind)
	if kind == "" {
		sync.missing("kind")
		return nil
	}
	name := sync.str("name")
	if name == "" {
		name = ref.Namespace // the operator's naming, as flux bootstrap's
	}
	path := sync.str("path")
	if path == "" {
		sync.missing("path")
		return nil
	}
	src := &Source{Kind: kind, Ref: Ref{Namespace: ref.Namespace, Name: name}, URL: sync.str("url")}
	gitRef := sync.str("ref")
	switch kind {
	case GitRepositoryKind:
		src.Git = &GitSpec{SecretName: sync.str("pullSecret")}
		if strings.HasPrefix(gitRef, "refs/") {
			src.Git.Name = gitRef
		} else if gitRef != "" {
			src.Git.Branch = gitRef
		}
	case OCIRepositoryKind:
		src.OCI = &OCISpec{Tag: gitRef, SecretName: sync.str("pullSecret")}
	}
	if gitRef != "" {
		src.GitRef = "ref " + gitRef
	}
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	doc := fmt.Sprintf("apiVersion: %s/v1\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  interval: 10m0s\n  path: %s\n  prune: true\n  sourceRef:\n    kind: %s\n    name: %s\n",
		fluxGroup, kustomizationKind, quote(name), quote(ref.Namespace), quote(path), quote(kind), quote(name))
	return &instance{ref: ref, source: src, kustomization: []byte(doc)}
}

// instance reads a FluxInstance's spec.sync (n, decoded by d): its
// source, and its Kustomization as a unit, at the FluxInstance's line.
// One whose sync does not read is no problem of the configuration (the
// operator's CRD would refuse it; this run applies none): a note says it
// is not taken as Flux's own sync.
func (r *reader) instance(d *decoder, n *yaml.Node) {
	top := d.mapping("", n)
	if top == nil {
		return
	}
	in := d.instance(top)
	if spec := top.object("spec"); spec != nil {
		// Read whatever its sync: the operator locks its controllers
		// down with or without one. Its problems are the operator's
		// CRD's, not the sync's.
		errs := d.errs
		at := fmt.Sprintf("%s:%d", d.file, d.fileLine(n.Line))
		if l, ok := d.instanceLockdown(spec, d.metadata(top), at); ok {
			r.lockdowns = append(r.lockdowns, l)
			if in != nil {
				in.multitenant = true
			}
		}
		d.errs = errs
	}
	if len(d.errs) > 0 {
		r.notes = append(r.notes, fmt.Sprintf("%s: not read as Flux's own sync: %v", d.object, d.errs[0]))
		return
	}
	if in == nil {
		return
	}
	line := d.fileLine(n.Line)
	in.source.File, in.source.Line = d.file, line
	r.instances = append(r.instances, in)
	var root yaml.Node
	if err := yaml.Unmarshal(in.kustomization, &root); err != nil || len(root.Content) == 0 {
		return // made above: it reads
	}
	kd := &decoder{file: d.file, line: line, flat: true}
	ktop := kd.mapping("", root.Content[0])
	if ktop == nil {
		return
	}
	k := kd.kustomization(ktop, v1)
	k.unit.Instance = true
	k.notes = append(k.notes, fmt.Sprintf("%s: made by FluxInstance %s's spec.sync, as Flux Operator makes it (interval 10m, prune)", k.unit.Ref, in.ref))
	if in.multitenant {
		// The operator's multitenant profile patches every Kustomization
		// it makes with kustomize-controller's own account
		// (profileClusterMultitenant): its sync runs as the controller.
		k.unit.ServiceAccountName = KustomizeController
		k.notes = append(k.notes, fmt.Sprintf("%s: spec.serviceAccountName kustomize-controller, as Flux Operator's multitenant lockdown patches the Kustomizations it makes", k.unit.Ref))
	}
	r.addKustomization(kd, k, d.file, line, in.kustomization)
}

// addInstances adds to s the sources of the FluxInstances' syncs, unless
// the files define them too (then theirs is read), and the notes.
func (r *reader) addInstances(s *Set) {
	for _, l := range r.lockdowns {
		s.mergeLockdown(l)
	}
	s.Notes = append(s.Notes, r.notes...)
	for _, in := range r.instances {
		if s.Source(in.source.Kind, in.source.Ref) == nil {
			s.Sources = append(s.Sources, in.source)
		}
	}
}
