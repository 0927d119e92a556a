package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Helm remediation, as helm-controller does it (internal/reconcile: the
// atomic release's rollback and uninstall actions), within one run: a
// release this run installs or upgrades whose objects fail to apply or
// become ready, or whose hooks or tests fail, is remediated per its
// HelmRelease's spec.install.remediation or spec.upgrade.remediation —
// a failed upgrade rolled back to the release last applied successfully
// (strategy rollback, the default) or uninstalled, a failed install
// uninstalled — and the attempt starts over while retries are left.
//
// A rollback re-renders the unit at the revision it last applied
// successfully (its inventory's lastAppliedRevision), from the
// repository's history, with the run's decryption keys and
// substitutions, and applies that render's objects of the release: no
// render, and so no Secret value, is ever stored for it.

// changedRelease is a release the run installs or upgrades.
type changedRelease struct {
	chart   helm.Chart
	upgrade bool
}

// changedReleases are the releases of d this run installs (not
// recorded) or upgrades (chart or values changed), by HelmRelease.
func (r *run) changedReleases(d *desired) map[string]changedRelease {
	recorded := recordedDigests(r.last)
	out := map[string]changedRelease{}
	for _, c := range d.Charts {
		digest, installed := recorded[c.Key()]
		if installed && digest == c.ConfigDigest {
			continue
		}
		out[c.Release.String()] = changedRelease{chart: c, upgrade: installed}
	}
	return out
}

// failedRelease is a changed release an attempt's failure is of.
type failedRelease struct {
	changedRelease
	test bool
}

// failedReleases are the changed releases err is a failure of: the one
// whose hook or test failed, else those with an object that did not
// become ready or failed to apply. A failure of the unit's other objects
// is no release's.
func (r *run) failedReleases(changed map[string]changedRelease, err error) []failedRelease {
	var re *releaseError
	if errors.As(err, &re) {
		if c, ok := changed[re.release]; ok {
			return []failedRelease{{changedRelease: c, test: re.test}}
		}
		return nil
	}
	failing := map[object.ID]bool{}
	var nr *health.NotReadyError
	if errors.As(err, &nr) {
		for _, u := range nr.Unready {
			failing[u.Object] = true
		}
	}
	for _, e := range r.res.Entries {
		if e.Action == result.Failed {
			failing[e.Object] = true
		}
	}
	var out []failedRelease
	for _, key := range slices.Sorted(maps.Keys(changed)) {
		c := changed[key]
		if slices.ContainsFunc(c.chart.Objects, func(id object.ID) bool { return failing[id] }) {
			out = append(out, failedRelease{changedRelease: c})
		}
	}
	return out
}

// remediate remediates the releases that attempt's failure err is of, as
// their HelmReleases say, and reports whether to try again: a release
// whose remediation went through and that has retries left.
func (r *run) remediate(ctx context.Context, d *desired, attempt int, err error) (retry bool) {
	if !r.mode.Writes() || len(d.Charts) == 0 {
		return false
	}
	for _, f := range r.failedReleases(r.changedReleases(d), err) {
		rem := remediationOf(f.chart, f.upgrade)
		if !rem.Remediates(attempt) {
			continue
		}
		rec := result.Remediation{HelmRelease: f.chart.Release.String(), Action: "install", Attempt: attempt, Strategy: helm.StrategyUninstall}
		if f.upgrade {
			rec.Action, rec.Strategy = "upgrade", rem.Strategy
		}
		if f.test {
			rec.Action = "test"
		}
		r.progress("%s: %s failed (attempt %d): remediating (%s)", rec.HelmRelease, rec.Action, attempt, rec.Strategy)
		if rec.Strategy == helm.StrategyRollback {
			r.rollback(ctx, d, f.chart, &rec)
		} else {
			r.uninstall(ctx, d, f.chart, &rec)
		}
		rec.Retried = rem.Retry(attempt) && rec.Error == ""
		retry = retry || rec.Retried
		r.res.Remediations = append(r.res.Remediations, rec)
		r.progress("remediation: %s", rec)
	}
	return retry
}

// rollback re-applies c's release as the unit's last successful apply
// rendered it, deletes what the failed upgrade added to it, and waits
// for it; rec says how it went.
func (r *run) rollback(ctx context.Context, d *desired, c helm.Chart, rec *result.Remediation) {
	rev := r.lastStatus().LastAppliedRevision
	switch {
	case rev == "":
		rec.Error = "no revision of the unit was applied successfully: nothing to roll back to"
		return
	case r.opts.At == nil:
		rec.Error = fmt.Sprintf("revision %s cannot be checked out here: no rollback", rev)
		return
	}
	rec.Revision = rev
	base, err := r.renderAt(ctx, rev, d.subs)
	if err != nil {
		rec.Error = fmt.Sprintf("rendering revision %s: %v", rev, err)
		return
	}
	i := slices.IndexFunc(base.Charts, func(b helm.Chart) bool { return b.Key() == c.Key() })
	if i < 0 {
		rec.Error = fmt.Sprintf("revision %s does not render release %s", rev, c.Key())
		return
	}
	prev := base.Charts[i]
	rec.Chart = prev.Chart + " " + prev.Version
	objs := objectsOf(base.Objects, prev.Objects)
	t, err := r.routeBack(prev)
	if err != nil {
		rec.Error = fmt.Sprintf("re-applying revision %s: %v", rev, err)
		return
	}
	opts := r.applyOptions(base)
	plan, err := r.cl.applier.DryRun(ctx, objs, opts)
	if err == nil {
		_, err = r.cl.applier.Execute(ctx, plan, opts)
	}
	rec.Applied = len(objs)
	restored := entriesFor(objs)
	for i, e := range restored {
		restored[i] = onTarget(e, t)
	}
	// Own what the rollback wrote, whatever happens next.
	if serr := r.record(ctx, inventory.Union(entriesOf(r.saved), restored), nil); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		rec.Error = fmt.Sprintf("re-applying revision %s: %v", rev, err)
		return
	}
	added := inventory.Diff(entriesWith(d.entries, c.Objects), restored)
	kept, removed, err := r.remove(ctx, added)
	rec.Deleted = deletedCount(removed)
	if serr := r.record(ctx, inventory.Union(inventory.Diff(entriesOf(r.saved), added), kept), nil); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		rec.Error = fmt.Sprintf("deleting what the upgrade added: %v", err)
		return
	}
	var ids []object.ID
	for _, u := range objs {
		if id := object.IDOf(u); !health.ReadyOnceApplied(id) {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		if _, err := r.cl.waiter.Wait(ctx, ids, health.Options{Timeout: r.opts.Timeout, Progress: r.opts.Progress}); err != nil {
			rec.Error = "not ready after the rollback: " + firstLine(err.Error())
		}
	}
}

// routeBack sends the objects of prev, a release as the revision rolled
// back to rendered it, to the target that revision installed it as (its
// spec.serviceAccountName and spec.kubeConfig then, which the failed
// upgrade may have changed), as helm-controller rolls a release back as
// the HelmRelease's account. That account acted at that revision: its
// rights are not checked beforehand again, the API server checks them.
func (r *run) routeBack(prev helm.Chart) (target, error) {
	t := chartTarget(prev, r.unitIdentity())
	rt := r.cl.routes
	if rt == nil {
		if !t.own() {
			return t, fmt.Errorf("the release was installed as %s: %w", t, errNoClusters)
		}
		return t, nil
	}
	if _, err := rt.connect(t); err != nil {
		return t, fmt.Errorf("the release was installed as %s: %w", t, err)
	}
	of, standIn := map[object.ID]target{}, map[object.ID]bool{}
	for _, id := range prev.Objects {
		of[id], standIn[id] = t, false
	}
	rt.route(of, standIn, nil, nil)
	return t, nil
}

// uninstall deletes c's release: the objects the failed attempt applied
// of it (what an earlier release had and it dropped was pruned by then,
// or is left to the unit's next prune), and forgets the release, so that
// the next run installs it.
func (r *run) uninstall(ctx context.Context, d *desired, c helm.Chart, rec *result.Remediation) {
	candidates := entriesWith(d.entries, c.Objects)
	kept, removed, err := r.remove(ctx, candidates)
	rec.Deleted = deletedCount(removed)
	st := r.status(result.ReasonProgressing, "remediating "+c.Release.String(), false)
	st.Releases = slices.DeleteFunc(slices.Clone(st.Releases), func(rel inventory.Release) bool { return rel.Name == c.Key() })
	gone := inventory.Diff(candidates, kept)
	if serr := r.record(ctx, inventory.Diff(entriesOf(r.saved), gone), st); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		rec.Error = err.Error()
	}
}

// objectsOf are the objects of objs whose IDs are among ids.
func objectsOf(objs []*unstructured.Unstructured, ids []object.ID) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range objs {
		if slices.Contains(ids, object.IDOf(u)) {
			out = append(out, u)
		}
	}
	return out
}

// entriesFor are inventory entries for objs.
func entriesFor(objs []*unstructured.Unstructured) []inventory.Entry {
	out := make([]inventory.Entry, len(objs))
	for i, u := range objs {
		out[i] = inventory.Entry{ID: object.IDOf(u), Version: u.GetAPIVersion()}
	}
	return out
}

// entriesWith are the entries whose IDs are among ids.
func entriesWith(entries []inventory.Entry, ids []object.ID) []inventory.Entry {
	var out []inventory.Entry
	for _, e := range entries {
		if slices.Contains(ids, e.ID) {
			out = append(out, e)
		}
	}
	return out
}

func deletedCount(entries []result.Entry) int {
	n := 0
	for _, e := range entries {
		if e.Action == result.Deleted {
			n++
		}
	}
	return n
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
