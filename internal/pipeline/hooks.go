package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/hooks"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// hookRunner runs Helm releases' lifecycle hooks (package hooks).
type hookRunner interface {
	Check(ctx context.Context, rel hooks.Release, events ...string) error
	Run(ctx context.Context, event string, rel hooks.Release, opts hooks.Options) ([]result.Entry, error)
}

type kubeHooks struct{ c client.Client }

func (k kubeHooks) Check(ctx context.Context, rel hooks.Release, events ...string) error {
	return hooks.Check(ctx, k.c, rel, events...)
}

func (k kubeHooks) Run(ctx context.Context, event string, rel hooks.Release, opts hooks.Options) ([]result.Entry, error) {
	return hooks.Run(ctx, k.c, event, rel, opts)
}

// releaseHooks are the hooks of a release this run installs or upgrades.
type releaseHooks struct {
	release hooks.Release
	upgrade bool
	timeout time.Duration
}

// releasesOf are the inventory's records of the releases charts rendered.
func releasesOf(charts []helm.Chart) []inventory.Release {
	out := []inventory.Release{}
	for _, c := range charts {
		out = append(out, inventory.Release{Name: c.Key(), Digest: c.ConfigDigest, Upgraded: c.Upgrade})
	}
	return out
}

// pendingHooks are the hooks this run of d fires, per release: a release
// the unit has not recorded is installed, one whose chart or values
// changed is upgraded. A release that did not change is left alone, as
// helm-controller leaves it, and runs no hook.
func (r *run) pendingHooks(d *desired) []releaseHooks {
	recorded := map[string]string{}
	if r.last != nil {
		for _, rel := range r.last.Status.Releases {
			recorded[rel.Name] = rel.Digest
		}
	}
	var out []releaseHooks
	for _, c := range d.Charts {
		if len(c.Hooks) == 0 {
			continue
		}
		digest, installed := recorded[c.Key()]
		if installed && digest == c.ConfigDigest {
			r.progress("release %s unchanged: no hook runs", c.Key())
			continue
		}
		out = append(out, releaseHooks{
			release: hooks.Release{Name: c.Release.String(), Source: c.Source, Hooks: c.Hooks},
			upgrade: installed,
			timeout: c.Timeout,
		})
	}
	return out
}

// checkHooks validates the hooks this run fires before anything is
// written: a hook the API server refuses fails the unit's validation.
func (r *run) checkHooks(ctx context.Context, pending []releaseHooks) error {
	for _, p := range pending {
		if err := r.cl.hooks.Check(ctx, p.release, helm.Pre(p.upgrade), helm.Post(p.upgrade)); err != nil {
			return failure(result.ReasonValidationFailed, err)
		}
	}
	return nil
}

// runHooks runs the pre (or post) hooks of each pending release, in
// order, and returns an entry per hook run.
func (r *run) runHooks(ctx context.Context, pending []releaseHooks, post bool) ([]result.Entry, error) {
	var entries []result.Entry
	for _, p := range pending {
		event := helm.Pre(p.upgrade)
		if post {
			event = helm.Post(p.upgrade)
		}
		opts := hooks.Options{Owner: r.owner, Timeout: or(p.timeout, r.opts.Timeout), Progress: r.opts.Progress}
		ran, err := r.cl.hooks.Run(ctx, event, p.release, opts)
		entries = append(entries, ran...)
		if err != nil {
			return entries, failure(result.ReasonApplyFailed, err)
		}
	}
	return entries, nil
}

// hookNotes say, in a diff, which hooks the apply would run.
func hookNotes(pending []releaseHooks) []string {
	var out []string
	for _, p := range pending {
		for _, event := range []string{helm.Pre(p.upgrade), helm.Post(p.upgrade)} {
			var names []string
			for _, h := range p.release.Hooks {
				if h.On(event) {
					names = append(names, object.IDOf(h.Object).String())
				}
			}
			if len(names) > 0 {
				out = append(out, fmt.Sprintf("%s: the apply runs its %s hooks %s", p.release.Name, event, strings.Join(names, ", ")))
			}
		}
	}
	return out
}
