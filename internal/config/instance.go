package config

import (
	"fmt"
	"strings"
)

// Flux Operator (fluxcd.controlplane.io) installs Flux from a FluxInstance
// and, with its spec.sync, makes Flux's own sync: a source and a
// Kustomization, both named after the instance's namespace (or
// spec.sync.name), that apply spec.sync.path. In an operator-managed
// fleet that pair is in no file, so the FluxInstance is read as
// gotk-sync.yaml is: its source is Flux's own sync source (see
// SyncSources), its Kustomization is Flux's own sync, not run.
const (
	operatorGroup    = "fluxcd.controlplane.io"
	fluxInstanceKind = "FluxInstance"
)

// isInstance says whether apiVersion and kind are a FluxInstance.
func isInstance(apiVersion, kind string) bool {
	return kind == fluxInstanceKind && groupOf(apiVersion) == operatorGroup
}

// instance is a FluxInstance's sync, as read.
type instance struct {
	source  *Source
	ignored Ignored
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
	src := &Source{Kind: kind, Ref: Ref{Namespace: ref.Namespace, Name: name}, URL: sync.str("url")}
	gitRef, path := sync.str("ref"), sync.str("path")
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
	return &instance{
		source: src,
		ignored: Ignored{
			Ref:  Ref{Namespace: ref.Namespace, Name: name},
			Why:  fmt.Sprintf("made by FluxInstance %s's spec.sync (path %s): Flux's own sync, which kustomize-deploy stands in for by running the Kustomizations it holds", ref, or(path, ".")),
			Sync: true, Source: SourceRef{Kind: kind, Namespace: ref.Namespace, Name: name},
		},
	}
}

// addInstances adds to s the syncs of the FluxInstances read: each
// source unless the files define it too (then theirs is read), and the
// Kustomization each makes, as Flux's own sync (Ignored); and the notes.
func (r *reader) addInstances(s *Set) {
	s.Notes = append(s.Notes, r.notes...)
	for _, in := range r.instances {
		if s.Source(in.source.Kind, in.source.Ref) == nil {
			s.Sources = append(s.Sources, in.source)
		}
		s.Ignored = append(s.Ignored, in.ignored)
	}
}
