package pipeline

import (
	"context"
	"fmt"
	"io"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// Checkout makes the unit's directory available as it is at another
// revision, e.g. a git worktree of a pull request's base. A nil Dir means
// the unit does not exist there. cleanup removes what Checkout made.
type Checkout func(ctx context.Context) (dir *paths.Dir, cleanup func(), err error)

// DiffOffline diffs the unit (opts) against the same unit at the revision
// base checks out, without a cluster: what a pull request changes when the
// workflow has no cluster access. Objects only in opts are created, only in
// base deleted (what prune would do), in both configured or unchanged.
// With nothing to dry-run against, server validation becomes the offline
// schema check, which knows opts.Schemas besides the unit's own CRDs; an
// object whose kind has no schema anywhere is not validated, and its
// entry says so, rather than failing the unit (the cluster may serve it).
//
// Nothing is decrypted (RenderSealed): the workflows without cluster
// access are those without secrets (a fork's PR), and a SOPS key in a PR
// job is a key a PR can make print. Encrypted values show masked; a
// changed ciphertext shows as a changed value.
//
// Charts render with the Kubernetes version of opts.Charts.KubeVersion
// and, as API versions, those of the unit's CRDs (its charts' included):
// see WithOfflineCapabilities.
func DiffOffline(ctx context.Context, opts Options, base Checkout) (*result.Result, error) {
	opts = WithOfflineCapabilities(opts, nil)
	head, err := RenderSealed(ctx, opts)
	if err != nil {
		return newRun(opts, result.ModeDiff).fail(ctx, failure(result.ReasonBuildFailed, err))
	}
	if len(head.Charts) > 0 {
		if withCRDs := WithOfflineCapabilities(opts, head.Objects); len(withCRDs.Charts.Capabilities.APIVersions) > 0 {
			opts = withCRDs
			quiet := opts
			quiet.Progress = io.Discard // said the first time
			if head, err = RenderSealed(ctx, quiet); err != nil {
				return newRun(opts, result.ModeDiff).fail(ctx, failure(result.ReasonBuildFailed, err))
			}
		}
	}
	return DiffOfflineRendered(ctx, opts, head, base)
}

// DiffOfflineRendered is DiffOffline of the unit rendered already as
// head (RenderSealed with opts): an offline diff of a configuration
// renders every unit first, to know the CRDs of all.
func DiffOfflineRendered(ctx context.Context, opts Options, head *Rendered, base Checkout) (*result.Result, error) {
	r := newRun(opts, result.ModeDiff)
	r.render = RenderSealed
	r.res.Releases = resultReleases(head.Charts, nil)
	r.noteLeftOut(head.LeftOut)
	if err := validate.Sizes(head.Objects, head.Sources); err != nil {
		return r.fail(ctx, failure(result.ReasonValidationFailed, err))
	}
	r.res.Validation = result.ValidationNone
	var unvalidated map[object.ID]string
	// A unit that does not validate is still compared with its base: its
	// images and dangers are what a reviewer reads beside the failure.
	var invalid error
	if opts.Validation != result.ValidationNone {
		r.res.Validation = result.ValidationClient
		var err error
		if unvalidated, err = r.checkOffline(head); err != nil {
			invalid = failure(result.ReasonValidationFailed, err)
		}
	}
	failWith := func(err error) (*result.Result, error) {
		if invalid != nil {
			return r.fail(ctx, invalid)
		}
		return r.fail(ctx, err)
	}
	dir, cleanup, err := base(ctx)
	if err != nil {
		return failWith(failure(result.ReasonArtifactFailed, err))
	}
	defer cleanup()
	var before *Rendered
	if dir != nil {
		baseOpts := r.opts
		baseOpts.Dir = *dir
		if before, err = r.render(ctx, baseOpts); err != nil {
			return failWith(failure(result.ReasonArtifactFailed, fmt.Errorf("rendering the base revision: %w", err)))
		}
	}
	entries := CompareRendered(before, head)
	review(r.res, entries, before, head, opts.Noise, nil)
	for i, e := range entries {
		if why, ok := unvalidated[e.Object]; ok && e.Action != result.Deleted {
			entries[i].Reason = why
		}
	}
	r.report(entries)
	if invalid != nil {
		return r.fail(ctx, invalid)
	}
	var gone []inventory.Entry
	for _, e := range entries {
		if e.Action == result.Deleted {
			g := inventory.Entry{ID: e.Object}
			if before != nil {
				if rs, ok := before.Generated[e.Object]; ok {
					g.Generator = rs.String()
				}
			}
			gone = append(gone, g)
		}
	}
	if err := r.checkPruneBudget(gone, head.ResourceSets); err != nil {
		return r.fail(ctx, err)
	}
	return r.done(result.ReasonOfflineDiffSucceed, "offline diff against the base revision (no cluster access)")
}

// checkOffline is the offline diff's schema check of head: an error for
// every object that breaks its schema, and the objects whose kind has no
// schema anywhere, each with the note its entry carries ("not validated:
// no schema for Kind.group"), and one note on the result per kind.
func (r *run) checkOffline(head *Rendered) (map[object.ID]string, error) {
	f, err := r.opts.Schemas.Check(withPlaceholders(head.Objects), head.Sources)
	if err != nil {
		return nil, err
	}
	unknown := f.UnknownKinds
	f.UnknownKinds = nil
	if err := f.Err(); err != nil {
		return nil, err
	}
	out := map[object.ID]string{}
	count := map[string]int{}
	var kinds []string
	for _, u := range unknown {
		kind := u.Kind()
		out[u.Object] = "not validated: no schema for " + kind
		if count[kind] == 0 {
			kinds = append(kinds, kind)
		}
		count[kind]++
	}
	scope, dir := "the unit", ""
	if r.opts.Schemas.HasCRDs() {
		scope = "the configuration"
	}
	if r.opts.Schemas.Dir() != "" {
		dir = ", and the schema directory has none"
	}
	for _, kind := range kinds {
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("not validated: no schema for %s (%d object(s)): neither Kubernetes %s nor a CustomResourceDefinition of %s defines it%s",
			kind, count[kind], validate.KubernetesVersion, scope, dir))
	}
	return out, nil
}

// withPlaceholders is objs with every encrypted value replaced by one of
// its type, for the schema check.
func withPlaceholders(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, u := range objs {
		out[i] = decrypt.WithPlaceholders(u)
	}
	return out
}

// CompareRendered diffs two renderings of a unit: objects only in head are
// created, only in base deleted, in both configured or unchanged. Secret
// values are masked in the diffs, and so is every field that came from a
// secret in either rendering, on both sides. Entries follow head's order,
// then base's leftovers.
func CompareRendered(base, head *Rendered) []result.Entry {
	if base == nil {
		base = &Rendered{}
	}
	before := byID(base.Objects)
	seen := map[object.ID]bool{}
	var entries []result.Entry
	for _, u := range head.Objects {
		id := object.IDOf(u)
		seen[id] = true
		e := result.Entry{Object: id, Version: u.GetAPIVersion(), Source: head.Sources[id], Stage: result.StageOf(u)}
		old, ok := before[id]
		switch {
		case !ok:
			e.Action = result.Created
		case reflect.DeepEqual(old.Object, u.Object):
			e.Action = result.Unchanged
		default:
			e.Action = result.Configured
		}
		e.Diff = changeBetween(base, head, id, old, u, nil)
		entries = append(entries, e)
	}
	for _, u := range base.Objects {
		id := object.IDOf(u)
		if !seen[id] {
			entries = append(entries, result.Entry{Object: id, Version: u.GetAPIVersion(), Source: base.Sources[id], Stage: result.StagePrune, Action: result.Deleted})
		}
	}
	return entries
}

// changeBetween is the diff of object id from its render old, in base, to
// now, in head: nil old is creation, nil now deletion; "" when both are
// equal. The fields either render holds from secrets are masked, and
// values (see diff.Secrets) where Git does not say.
func changeBetween(base, head *Rendered, id object.ID, old, now *unstructured.Unstructured, values []string) string {
	if old != nil && now != nil && reflect.DeepEqual(old.Object, now.Object) {
		return ""
	}
	secrets := diff.Secrets{Fields: head.SecretFields[id].Union(base.SecretFields[id]), Values: values}
	return diff.Between("base", "head", id, old, now, secrets)
}
