package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// expandCharts renders the HelmReleases among rendered's objects into
// their charts' objects (see helm.Expand), when opts.Charts asks for it:
// the HelmReleases and their sources are read, not applied. The values
// that came from Secrets into charts are masked at once, and the fields
// of rendered objects holding one recorded. A unit with charts is reused
// only once they are rendered (see chartsUnchangedSinceLastApply). A
// HelmRelease to be installed as another identity than the unit's is
// refused before any chart is fetched or looks up the cluster (see
// checkReleaseAccounts).
func expandCharts(ctx context.Context, rendered *Rendered, opts Options) error {
	if opts.Charts == nil || !helm.HasReleases(rendered.Objects) {
		return nil
	}
	lines := linesIn(opts.Dir.Root)
	if err := checkReleases(rendered.Objects, rendered.Sources, lines); err != nil {
		return err
	}
	if err := checkReleaseAccounts(rendered.Objects, rendered.Sources, appliesAs(opts), opts.Config != "", lines); err != nil {
		return err
	}
	exp, err := helm.Expand(ctx, rendered.Objects, rendered.Sources, *opts.Charts)
	if err != nil {
		return err
	}
	maskWith(opts.Mask, exp.Secrets)
	rendered.Objects, rendered.Sources = exp.Objects, exp.Sources
	for id, f := range exp.SecretFields {
		rendered.SecretFields[id] = f.Union(rendered.SecretFields[id])
	}
	rendered.Charts = exp.Charts
	for _, c := range exp.Charts {
		if len(c.HealthCheckExprs) == 0 {
			continue
		}
		evs, err := health.ParseExpressions(healthExpressions(c.HealthCheckExprs))
		if err != nil {
			return fmt.Errorf("%s (%s): spec.%w", c.Release, c.Source, err)
		}
		rendered.Health = rendered.Health.Merge(evs)
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	for _, c := range exp.Charts {
		fmt.Fprintf(progress, "%s: chart %s %s (sha256:%s) from %s, %d object(s), release %s in namespace %s\n",
			c.Release, c.Chart, c.Version, short(c.Digest), c.From, len(c.Objects), c.ReleaseName, c.Namespace)
	}
	for _, n := range exp.Notes {
		fmt.Fprintln(progress, "note: "+n)
	}
	return nil
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

// WithOfflineCapabilities gives opts' chart rendering what templates see
// when there is no cluster (an offline diff): the --kube-version setting
// and the API versions of the CustomResourceDefinitions among objs (see
// helm.OfflineCapabilities). Without charts to render, opts is returned
// as it is.
func WithOfflineCapabilities(opts Options, objs []*unstructured.Unstructured) Options {
	if opts.Charts == nil {
		return opts
	}
	charts := *opts.Charts
	charts.Capabilities = helm.OfflineCapabilities(charts.KubeVersion, objs)
	opts.Charts = &charts
	return opts
}

// checkReleases reads every HelmRelease among objs before any chart is
// fetched: a field helm.ReadRelease does not know or cannot honour
// refuses the unit, each release's problems a build.FileError at its
// file and line (the Action annotates them), every release's at once.
func checkReleases(objs []*unstructured.Unstructured, sources map[object.ID]string, lineOf func(file string, id object.ID) int) error {
	var errs []error
	for _, u := range objs {
		if !helm.IsRelease(u) {
			continue
		}
		if _, err := helm.ReadRelease(u); err != nil {
			id := object.IDOf(u)
			fe := &build.FileError{File: sources[id]}
			at := fe.File
			if fe.File != "" {
				if fe.Line = lineOf(fe.File, id); fe.Line > 0 {
					at = fmt.Sprintf("%s:%d", fe.File, fe.Line)
				}
			}
			name := fmt.Sprintf("HelmRelease %s/%s", cmp.Or(u.GetNamespace(), "default"), u.GetName())
			if at != "" {
				name += " (" + at + ")"
			}
			fe.Err = fmt.Errorf("%s: %w", name, err)
			if fe.File == "" {
				errs = append(errs, fe.Err)
				continue
			}
			errs = append(errs, fe)
		}
	}
	return errors.Join(errs...)
}

// healthExpressions are a HelmRelease's spec.healthCheckExprs for the
// waiter.
func healthExpressions(in []helm.HealthCheckExpr) []health.Expressions {
	out := make([]health.Expressions, len(in))
	for i, e := range in {
		out[i] = health.Expressions{APIVersion: e.APIVersion, Kind: e.Kind, Current: e.Current, InProgress: e.InProgress, Failed: e.Failed}
	}
	return out
}
