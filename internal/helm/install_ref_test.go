package helm

// The render path's reference: how charts were rendered before Helm's
// engine was called directly (action.Install in client-only dry-run,
// its manifest split and parsed back). TestRenderIsHelmsInstall holds
// render to it.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

func renderViaInstall(ctx context.Context, rel *Release, ch *chart.Chart, vals map[string]any, caps Capabilities, upgrade bool, lookup *templateLookup) (*Rendered, error) {
	cfg := action.NewConfiguration()
	cfg.SetLogger(slog.DiscardHandler)
	guard := newTplGuard(ctx)
	cfg.CustomTemplateFuncs = lookup.funcs(ctx)
	if cfg.CustomTemplateFuncs == nil {
		cfg.CustomTemplateFuncs = map[string]any{}
	}
	cfg.CustomTemplateFuncs[tplGuardFunc] = guard.guard
	inst := action.NewInstall(cfg)
	inst.DryRunStrategy = action.DryRunClient
	inst.ReleaseName, inst.Namespace = rel.ReleaseName, rel.ReleaseNamespace
	inst.DisableHooks = rel.DisableHooks
	inst.IsUpgrade = upgrade
	inst.SkipSchemaValidation = rel.DisableSchemaValidation
	inst.IncludeCRDs = false // placed per the CRD policy below
	inst.Devel = true
	if caps.KubeVersion != "" {
		kv, err := common.ParseKubeVersion(caps.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kube version %q: %w", caps.KubeVersion, err)
		}
		inst.KubeVersion = kv
	}
	inst.APIVersions = caps.APIVersions
	out, err := inst.RunWithContext(ctx, guardChart(ch), vals)
	if err != nil {
		if guard.err != nil {
			return nil, guard.err // not Helm's message: it quotes the template once per level
		}
		return nil, renderError(err)
	}
	hr, ok := out.(*release.Release)
	if !ok {
		return nil, errors.New("the chart rendered to no Helm v1 release")
	}
	r := &Rendered{Templates: map[object.ID]string{}}
	if rel.CRDs != CRDsSkip {
		for _, crd := range ch.CRDObjects() {
			objs, err := objects(crd.File.Data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", crd.Filename, err)
			}
			for _, u := range objs {
				// Never pruned, as Helm never deletes a chart's CRDs:
				// deleting one deletes every object of its kind.
				setAnnotation(u, object.AnnotationPrefix+object.PruneKey, object.Disabled)
				if rel.CRDs == CRDsCreate {
					// Created when missing, never changed: the install
					// policy of Flux's default, Create.
					setAnnotation(u, object.AnnotationPrefix+object.SSAKey, object.SSAIfNotPresent)
				}
				r.add(u, crd.Filename)
			}
		}
	}
	templates := splitInstallManifest(hr.Manifest)
	parsed, err := parseInstallTemplates(templates)
	if err != nil {
		return nil, err
	}
	for i, t := range templates {
		for _, u := range parsed[i] {
			if u.GetNamespace() == "" && namespacedGuess(u) {
				u.SetNamespace(rel.ReleaseNamespace)
			}
			r.add(u, t.path)
		}
	}
	for _, h := range hr.Hooks {
		if rel.DisableHooks || slices.Contains(h.Events, release.HookTest) && !rel.Test.Enable {
			continue // tests run only when spec.test.enable says; disabled hooks never
		}
		objs, err := objects([]byte(h.Manifest))
		if err != nil || len(objs) != 1 {
			return nil, fmt.Errorf("%s: a hook is one object: %v", h.Path, err)
		}
		u := objs[0]
		if u.GetNamespace() == "" && namespacedGuess(u) {
			u.SetNamespace(rel.ReleaseNamespace)
		}
		hook := Hook{Object: u, Path: h.Path, Weight: h.Weight}
		for _, e := range h.Events {
			hook.Events = append(hook.Events, string(e))
		}
		for _, p := range h.DeletePolicies {
			hook.DeletePolicies = append(hook.DeletePolicies, string(p))
		}
		r.Hooks = append(r.Hooks, hook)
	}
	// Helm runs an event's hooks by weight, then by name.
	sort.SliceStable(r.Hooks, func(i, j int) bool {
		a, b := r.Hooks[i], r.Hooks[j]
		if a.Weight != b.Weight {
			return a.Weight < b.Weight
		}
		return a.Object.GetName() < b.Object.GetName()
	})
	return r, nil
}

// template is one rendered template of a manifest.
type installTemplate struct{ path, body string }

var sourceLine = regexp.MustCompile(`(?m)^# Source: (.+)$`)

// splitManifest splits a release's manifest into its templates, each
// named by its "# Source:" line.
func splitInstallManifest(manifest string) []installTemplate {
	var out []installTemplate
	for _, doc := range strings.Split(manifest, "\n---") {
		doc = strings.TrimPrefix(strings.TrimSpace(doc), "---")
		if strings.TrimSpace(doc) == "" {
			continue
		}
		path := ""
		if m := sourceLine.FindStringSubmatch(doc); m != nil {
			path = strings.TrimSpace(m[1])
		}
		out = append(out, installTemplate{path: path, body: doc})
	}
	return out
}

// parseTemplates reads the objects of each template, on every CPU: a
// large chart's manifest costs as much to read back as to render.
func parseInstallTemplates(ts []installTemplate) ([][]*unstructured.Unstructured, error) {
	out := make([][]*unstructured.Unstructured, len(ts))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, t := range ts {
		g.Go(func() error {
			objs, err := objects([]byte(t.body))
			if err != nil {
				return fmt.Errorf("%s: %w", t.path, err)
			}
			out[i] = objs
			return nil
		})
	}
	return out, g.Wait()
}
