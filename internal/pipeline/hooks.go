package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/hooks"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// hookRunner runs Helm releases' lifecycle hooks (package hooks).
type hookRunner interface {
	Check(ctx context.Context, rel hooks.Release, events ...string) error
	Run(ctx context.Context, event string, rel hooks.Release, opts hooks.Options) ([]result.Entry, error)
}

// kubeHooks runs a release's hooks as the release's target (see
// router).
type kubeHooks struct{ rt *router }

// clients are what rel's hooks run through: its target's; for a check,
// the unit's when the release's objects stand in (their account's
// rights come with the apply, see accountRule).
func (k kubeHooks) clients(rel hooks.Release, check bool) (*kube.Clients, error) {
	k.rt.mu.Lock()
	t := k.rt.releases[rel.Name]
	if check && k.rt.standInReleases[rel.Name] {
		t = target{}
	}
	k.rt.mu.Unlock()
	cn, err := k.rt.connect(t)
	if err != nil {
		return nil, err
	}
	return cn.c, nil
}

func (k kubeHooks) Check(ctx context.Context, rel hooks.Release, events ...string) error {
	c, err := k.clients(rel, true)
	if err != nil {
		return err
	}
	return hooks.Check(ctx, c.Client, rel, events...)
}

// Run runs the hooks; one that fails is diagnosed (health.Diagnose)
// before its delete policy may remove it and its pods.
func (k kubeHooks) Run(ctx context.Context, event string, rel hooks.Release, opts hooks.Options) ([]result.Entry, error) {
	c, err := k.clients(rel, false)
	if err != nil {
		return nil, err
	}
	opts.Diagnose = func(ctx context.Context, id object.ID) []result.Diagnostic {
		return health.Diagnose(ctx, c, []object.ID{id})
	}
	return hooks.Run(ctx, c.Client, event, rel, opts)
}

// releaseHooks are the hooks of a release this run installs or upgrades.
type releaseHooks struct {
	release hooks.Release
	upgrade bool
	timeout time.Duration
	// level is the release's in its unit's dependsOn graph.
	level int
	// test says whether its test hooks run, and remediation whether
	// their failure is ignored.
	test        helm.Tests
	remediation helm.Remediation
}

// releaseError is the failure of a release's hook or test: the release
// it names is the one a remediation acts on.
type releaseError struct {
	// release is HelmRelease/namespace/name; test, that a test failed.
	release string
	test    bool
	err     error
}

func (e *releaseError) Error() string { return e.err.Error() }
func (e *releaseError) Unwrap() error { return e.err }

// atLevel are the releases of pending at level.
func atLevel(pending []releaseHooks, level int) []releaseHooks {
	var out []releaseHooks
	for _, p := range pending {
		if p.level == level {
			out = append(out, p)
		}
	}
	return out
}

// releaseLevels maps each object a chart rendered to its release's level
// (see helm.Chart.Level); the unit's other objects are at level 0.
func releaseLevels(charts []helm.Chart) map[object.ID]int {
	out := map[object.ID]int{}
	for _, c := range charts {
		for _, id := range c.Objects {
			out[id] = c.Level
		}
	}
	return out
}

// lastLevel is the highest level of charts' releases: 0 when none
// depends on another.
func lastLevel(charts []helm.Chart) int {
	m := 0
	for _, c := range charts {
		m = max(m, c.Level)
	}
	return m
}

// only is the part of p whose objects keep says.
func only(p *apply.Plan, keep func(object.ID) bool) *apply.Plan {
	out := &apply.Plan{}
	for _, s := range p.Steps {
		if keep(s.Entry.Object) {
			out.Steps = append(out.Steps, s)
		}
	}
	return out
}

// waitForWave waits for the objects a wave of releases applied to become
// ready (what a HelmRelease's readiness means to the releases depending
// on it), whatever the unit's wait setting.
func (r *run) waitForWave(ctx context.Context, level int, applied *apply.Outcome) error {
	var ids []object.ID
	for _, e := range applied.Entries {
		if applied.Current[e.Object] && !r.judged(e.Object) {
			continue // ready as applied
		}
		if e.Action != result.Skipped && r.waitedFor(e.Object) {
			ids = append(ids, e.Object)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	r.progress("waiting up to %s for the %d object(s) of the releases at dependsOn level %d, before those depending on them", r.opts.Timeout, len(ids), level)
	if _, err := r.cl.waiter.Wait(ctx, ids, r.healthOptions()); err != nil {
		return failure(result.ReasonHealthCheckFailed, fmt.Errorf("HelmReleases depending on others were not applied: %w", err))
	}
	return nil
}

// resultReleases say, on a run's result, what each chart rendered, and
// as whom and where it is installed when that is not the unit's way;
// targets are those of the releases' objects of another identity or
// cluster than the unit's (see route).
func resultReleases(charts []helm.Chart, targets map[object.ID]target) []result.Release {
	var out []result.Release
	for _, c := range charts {
		rel := result.Release{HelmRelease: c.Release.String(), Chart: c.Chart, Version: c.Version, Digest: c.Digest,
			Name: c.ReleaseName, Namespace: c.Namespace, Objects: c.Objects, Labels: c.Labels, Annotations: c.Annotations}
		if len(c.Objects) > 0 {
			if t, ok := targets[c.Objects[0]]; ok {
				rel.InstalledAs = t.String()
			}
		}
		out = append(out, rel)
	}
	return out
}

// releasesOf are the inventory's records of the releases charts rendered.
func releasesOf(charts []helm.Chart) []inventory.Release {
	out := []inventory.Release{}
	for _, c := range charts {
		out = append(out, inventory.Release{Name: c.Key(), Digest: c.ConfigDigest, Upgraded: c.Upgrade})
	}
	return out
}

// recordedDigests are the config digests (helm.Chart.ConfigDigest) of
// the releases inv recorded, by release (namespace/name); none without
// an inventory.
func recordedDigests(inv *inventory.Inventory) map[string]string {
	out := map[string]string{}
	if inv != nil {
		for _, rel := range inv.Status.Releases {
			out[rel.Name] = rel.Digest
		}
	}
	return out
}

// pendingHooks are the hooks this run of d fires, per release: a release
// the unit has not recorded is installed, one whose chart or values
// changed is upgraded. A release that did not change is left alone, as
// helm-controller leaves it, and runs no hook.
func (r *run) pendingHooks(d *desired) []releaseHooks {
	recorded := recordedDigests(r.last)
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
			release:     hooks.Release{Name: c.Release.String(), Source: c.Source, Hooks: c.Hooks},
			upgrade:     installed,
			timeout:     c.Timeout,
			level:       c.Level,
			test:        c.Test,
			remediation: remediationOf(c, installed),
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
			return entries, failure(result.ReasonApplyFailed, &releaseError{release: p.release.Name, err: err})
		}
	}
	return entries, nil
}

// runTests runs the test hooks of each pending release whose
// spec.test.enable says so, once it is installed or upgraded and ready,
// as helm-controller does; a failing test fails the release, unless its
// remediation ignores test failures.
func (r *run) runTests(ctx context.Context, pending []releaseHooks) ([]result.Entry, error) {
	var entries []result.Entry
	for _, p := range pending {
		if !p.test.Enable || !slices.ContainsFunc(p.release.Hooks, func(h helm.Hook) bool { return h.On(helm.Test) }) {
			continue
		}
		r.progress("running the tests of %s", p.release.Name)
		opts := hooks.Options{Owner: r.owner, Timeout: or(p.timeout, r.opts.Timeout), Progress: r.opts.Progress}
		ran, err := r.cl.hooks.Run(ctx, helm.Test, p.release, opts)
		entries = append(entries, ran...)
		if err == nil {
			continue
		}
		if p.remediation.IgnoreTestFailures {
			r.note("%s: its tests failed, and test failures are ignored (ignoreTestFailures): %v", p.release.Name, err)
			continue
		}
		return entries, failure(result.ReasonTestFailed, &releaseError{release: p.release.Name, test: true, err: err})
	}
	return entries, nil
}

// remediationOf is what c's HelmRelease says to do when its install (or
// upgrade) fails.
func remediationOf(c helm.Chart, upgrade bool) helm.Remediation {
	if upgrade {
		return c.UpgradeRemediation
	}
	return c.InstallRemediation
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
