// Package hooks runs a Helm release's lifecycle hooks on the cluster as
// Helm and helm-controller run them: on an event of the release
// (pre-install, post-upgrade...), one at a time by weight, each created,
// waited for until it completes (a Job or a Pod) and deleted per its
// policies (before-hook-creation, hook-succeeded, hook-failed).
//
// Hooks are not the unit's objects: they are never in its inventory, never
// pruned, and a hook another run left behind is replaced only when it is
// provably a hook (it carries the unit's labels or Helm's hook annotation).
package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kwait "k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// HookAnnotation is Helm's annotation marking a template as a hook.
const HookAnnotation = "helm.sh/hook"

// Options say how hooks run.
type Options struct {
	// Owner are the labels naming the unit: every hook carries them, so
	// that the next run may prove a hook left behind is the unit's.
	Owner map[string]string
	// Timeout bounds the wait for each hook to complete (and for a hook
	// it replaces to be gone); zero means five minutes, Helm's default.
	Timeout time.Duration
	// Interval is how often a hook's status is read; zero means a
	// quarter of a second (a Job often completes within a second or two,
	// and the run waits for it).
	Interval time.Duration
	// Progress receives a line per hook as it starts and ends.
	Progress io.Writer
	// Diagnose, if set, says what the cluster said about a hook that
	// failed (its events, its pods' containers and logs), read before
	// its delete policy removes it.
	Diagnose func(ctx context.Context, id object.ID) []result.Diagnostic
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Interval <= 0 {
		o.Interval = 250 * time.Millisecond
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

// Release is one release's hooks for an event.
type Release struct {
	// Name says which release, for messages: HelmRelease ns/name.
	Name string
	// Source is the file the HelmRelease came from.
	Source string
	// Hooks are the release's hooks, in the order Helm runs them.
	Hooks []helm.Hook
}

// Run runs the hooks of rel that run on event, in order, through c. It
// returns an entry per hook run; the first hook that fails (or does not
// complete within the timeout) ends the run with an error naming it, its
// template and its release, and no later hook runs.
func Run(ctx context.Context, c client.Client, event string, rel Release, opts Options) ([]result.Entry, error) {
	opts = opts.withDefaults()
	var entries []result.Entry
	for _, h := range rel.Hooks {
		if !h.On(event) {
			continue
		}
		e, err := runOne(ctx, c, event, rel, h, opts)
		entries = append(entries, e)
		if err != nil {
			return entries, fmt.Errorf("%s hook %s (%s of %s, %s): %w", event, object.IDOf(h.Object), h.Path, rel.Name, rel.Source, err)
		}
	}
	return entries, nil
}

// Check validates, with a server-side dry-run of their creation, the hooks
// of rel that run on any of events, so that a hook the API server would
// refuse fails the unit before anything is written. A hook whose Namespace
// does not exist yet (the unit creates it) cannot be checked and is left
// to its run.
func Check(ctx context.Context, c client.Client, rel Release, events ...string) error {
	var errs []error
	for _, h := range rel.Hooks {
		if !slices.ContainsFunc(events, h.On) {
			continue
		}
		u := h.Object.DeepCopy()
		// Under a generated name, so that the hook a run left behind
		// (replaced when the hook runs) does not answer for it.
		u.SetGenerateName(u.GetName() + "-")
		u.SetName("")
		err := c.Create(ctx, u, client.DryRunAll, client.FieldOwner(apply.FieldManager))
		if err == nil || isMissingNamespace(err, h.Object.GetNamespace()) {
			continue
		}
		errs = append(errs, fmt.Errorf("hook %s (%s of %s, %s): %w", object.IDOf(h.Object), h.Path, rel.Name, rel.Source, err))
	}
	return errors.Join(errs...)
}

// isMissingNamespace reports whether err says namespace ns is not found.
func isMissingNamespace(err error, ns string) bool {
	if !apierrors.IsNotFound(err) || ns == "" {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	d := status.Status().Details
	return d.Kind == "namespaces" && d.Name == ns
}

// runOne creates h, waits for it and deletes it per its policies.
func runOne(ctx context.Context, c client.Client, event string, rel Release, h helm.Hook, opts Options) (result.Entry, error) {
	u := h.Object.DeepCopy()
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, opts.Owner)
	u.SetLabels(labels)
	id := object.IDOf(u)
	entry := result.Entry{Object: id, Version: u.GetAPIVersion(), Source: rel.Source, Stage: result.StageHooks, Action: result.Created, Release: rel.Name}
	fail := func(err error) (result.Entry, error) {
		entry.Action, entry.Reason = result.Failed, err.Error()
		return entry, err
	}
	if h.Deletes(helm.BeforeHookCreation) {
		if err := replace(ctx, c, u, opts); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(opts.Progress, "%s hook %s: running (weight %d)\n", event, id, h.Weight)
	start := time.Now()
	if err := c.Create(ctx, u, client.FieldOwner(apply.FieldManager)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fail(fmt.Errorf("it exists already and its delete policies (%v) do not replace it: delete it, or give the hook the %s policy", h.DeletePolicies, helm.BeforeHookCreation))
		}
		return fail(fmt.Errorf("creating it: %w", err))
	}
	waitErr := wait(ctx, c, u, opts)
	took := time.Since(start).Round(time.Second)
	var diagnostics []result.Diagnostic
	if waitErr != nil && opts.Diagnose != nil && ctx.Err() == nil {
		diagnostics = opts.Diagnose(ctx, id)
	}
	policy := helm.HookSucceeded
	if waitErr != nil {
		policy = helm.HookFailed
	}
	reason := fmt.Sprintf("%s hook, completed in %s", event, took)
	if waitErr != nil {
		reason = fmt.Sprintf("%s hook, failed after %s: %v", event, took, waitErr)
	}
	if h.Deletes(policy) {
		if err := remove(ctx, c, u, opts); err != nil {
			waitErr = errors.Join(waitErr, fmt.Errorf("deleting it (%s): %w", policy, err))
		} else {
			reason += "; deleted (" + policy + ")"
		}
	}
	fmt.Fprintf(opts.Progress, "hook %s: %s\n", id, reason)
	if waitErr != nil {
		if len(diagnostics) > 0 {
			waitErr = &health.DiagnosedError{Err: waitErr, Diagnostics: diagnostics}
		}
		return fail(waitErr)
	}
	entry.Reason = reason
	return entry, nil
}

// replace deletes the object u would be created as, when one exists and is
// provably a hook: the unit's (its labels) or Helm's (its annotation).
// Anything else of that name is left alone, and the hook fails.
func replace(ctx context.Context, c client.Client, u *unstructured.Unstructured, opts Options) error {
	live, err := get(ctx, c, u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading it before replacing it: %w", err)
	}
	if !provablyHook(live, opts.Owner) {
		return errors.New("an object of that name exists and is not a hook of this unit (no owner labels, no helm.sh/hook annotation): it is left alone")
	}
	return remove(ctx, c, live, opts)
}

// provablyHook reports whether live is a hook this unit (or Helm) created.
func provablyHook(live *unstructured.Unstructured, owner map[string]string) bool {
	if _, ok := live.GetAnnotations()[HookAnnotation]; ok {
		return true
	}
	labels := live.GetLabels()
	for k, v := range owner {
		if labels[k] != v {
			return false
		}
	}
	return len(owner) > 0
}

// remove deletes u (its Pods with it, in the background) and waits until
// it is gone.
func remove(ctx context.Context, c client.Client, u *unstructured.Unstructured, opts Options) error {
	err := c.Delete(ctx, u, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	err = poll(ctx, opts, func(ctx context.Context) (bool, error) {
		_, err := get(ctx, c, u)
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
	if kwait.Interrupted(err) {
		return fmt.Errorf("still there after %s", opts.Timeout)
	}
	return err
}

// wait waits until u completes, as Helm waits for a hook: a Job until it
// completes or fails, a Pod until it succeeds or fails; any other kind is
// done once created.
func wait(ctx context.Context, c client.Client, u *unstructured.Unstructured, opts Options) error {
	if !waitsFor(u) {
		return nil
	}
	last := time.Now()
	err := poll(ctx, opts, func(ctx context.Context) (bool, error) {
		live, err := get(ctx, c, u)
		if err != nil {
			return false, fmt.Errorf("reading its status: %w", err)
		}
		switch state, why := completion(live); state {
		case done:
			return true, nil
		case failed:
			return false, errors.New(why)
		}
		if time.Since(last) >= 10*time.Second {
			fmt.Fprintf(opts.Progress, "hook %s: still running\n", object.IDOf(u))
			last = time.Now()
		}
		return false, nil
	})
	if kwait.Interrupted(err) {
		return fmt.Errorf("not complete within %s", opts.Timeout)
	}
	return err
}

// poll calls cond every opts.Interval, at once first, until it is done or
// fails, or opts.Timeout passes (an error kwait.Interrupted recognises). A
// read cut short by the timeout counts as the timeout.
func poll(ctx context.Context, opts Options, cond kwait.ConditionWithContextFunc) error {
	return kwait.PollUntilContextTimeout(ctx, opts.Interval, opts.Timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil && ctx.Err() != nil {
			return false, ctx.Err()
		}
		return ok, err
	})
}

// get reads the object u names as the cluster holds it now.
func get(ctx context.Context, c client.Client, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(u.GroupVersionKind())
	return live, c.Get(ctx, client.ObjectKeyFromObject(u), live)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
