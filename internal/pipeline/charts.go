package pipeline

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
)

// expandCharts renders the HelmReleases among rendered's objects into
// their charts' objects (see helm.Expand), when opts.Charts asks for it:
// the HelmReleases and their sources are read, not applied. The values
// that came from Secrets into charts are masked at once, and the fields
// of rendered objects holding one recorded. A unit with charts is reused
// only once they are rendered (see chartsUnchangedSinceLastApply). A
// release's refusal names its HelmRelease's file and line.
func expandCharts(ctx context.Context, rendered *Rendered, opts Options) error {
	if opts.Charts == nil || !helm.HasReleases(rendered.Objects) {
		return nil
	}
	charts := *opts.Charts
	charts.LineOf = linesIn(opts.Dir.Root)
	exp, err := helm.Expand(ctx, rendered.Objects, rendered.Sources, charts)
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
// helm.OfflineCapabilities), and marks the rendering offline: a
// provider's login takes only the credentials the environment names
// (helm.Options.Offline). Without charts to render, opts is returned as
// it is.
func WithOfflineCapabilities(opts Options, objs []*unstructured.Unstructured) Options {
	if opts.Charts == nil {
		return opts
	}
	charts := *opts.Charts
	charts.Capabilities = helm.OfflineCapabilities(charts.KubeVersion, objs)
	charts.Offline = true
	opts.Charts = &charts
	return opts
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
