package source

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
)

// What a mapped source feeds, for the warning that its signature was not
// checked.
const (
	feedsManifests = "the manifests of the Kustomizations naming it are built"
	feedsCharts    = "the charts of the HelmReleases naming it are rendered"
)

// unverified says, once per source, that the signature its spec.verify
// asks for (cosign with a key or keyless, notation; a GitRepository's
// commit signature) was not checked: the directory mapped to it stands
// in for the pull or fetch that would check it, and what it feeds is
// read from that directory as it is. It returns the warning, "" when the
// source asks for no verification.
func (r *Resolver) unverified(ref config.SourceRef, dir, feeds string) string {
	s := r.set.Source(ref.Kind, config.Ref{Namespace: ref.Namespace, Name: ref.Name})
	if s == nil {
		return ""
	}
	verify, how := false, "pull"
	switch {
	case s.OCI != nil:
		verify = s.OCI.Verify != nil || slices.ContainsFunc(s.OCI.Unsupported, func(f string) bool { return strings.HasPrefix(f, "spec.verify") })
	case s.Git != nil:
		verify, how = slices.Contains(s.Git.Unsupported, "spec.verify"), "fetch"
	}
	if !verify {
		return ""
	}
	text := fmt.Sprintf("%s (%s:%d): spec.verify is not checked: the source is mapped to %s, which stands in for the %s that would verify it; %s from %s as it is",
		ref, s.File, s.Line, dir, how, feeds, dir)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.noted == nil {
		r.noted = map[string]bool{}
	}
	if key := "unverified " + ref.String() + " " + feeds; !r.noted[key] {
		r.noted[key] = true
		r.warnings = append(r.warnings, text)
	}
	return text
}

// Warnings are what resolving warned of, one line each: what a run must
// say whether or not it is verbose.
func (r *Resolver) Warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.warnings)
}
