package helm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// The release events this tool runs hooks on. A release the unit has not
// recorded is installed; one whose render changed is upgraded.
const (
	PreInstall  = "pre-install"
	PostInstall = "post-install"
	PreUpgrade  = "pre-upgrade"
	PostUpgrade = "post-upgrade"
)

// The delete policies of a hook.
const (
	BeforeHookCreation = "before-hook-creation"
	HookSucceeded      = "hook-succeeded"
	HookFailed         = "hook-failed"
)

// runEvents are the events hooks run on here; a hook on none of them
// (pre-delete, post-rollback...) is noted, never run.
var runEvents = []string{PreInstall, PostInstall, PreUpgrade, PostUpgrade}

// Pre and Post are the events before and after a release's objects are
// applied: installing when upgrade is false.
func Pre(upgrade bool) string {
	if upgrade {
		return PreUpgrade
	}
	return PreInstall
}

// Post is the event after a release's objects are applied and ready.
func Post(upgrade bool) string {
	if upgrade {
		return PostUpgrade
	}
	return PostInstall
}

// hooksNotRun says which hooks run on no event this tool runs (deleting
// and rolling back a release are not done with Helm here), or "".
func hooksNotRun(hooks []Hook) string {
	var names []string
	for _, h := range hooks {
		if !slices.ContainsFunc(runEvents, h.On) {
			names = append(names, fmt.Sprintf("%s/%s (%s)", h.Object.GetKind(), h.Object.GetName(), strings.Join(h.Events, ",")))
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return "hooks " + strings.Join(names, ", ") + " are not run: this tool runs install and upgrade hooks only (a unit's objects are deleted by pruning, without Helm)"
}

// hookObjects are the hooks' objects.
func hookObjects(hooks []Hook) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(hooks))
	for i, h := range hooks {
		out[i] = h.Object
	}
	return out
}

// renderDigest sums up a release's render: its chart, and the digest of
// every object and hook but Secrets (a digest of a Secret's values, kept
// in the inventory, would let whoever reads it guess a weak value).
func renderDigest(c *Chart, objs []*unstructured.Unstructured, hooks []Hook) string {
	h := sha256.New()
	fmt.Fprintf(h, "chart %s %s %s\n", c.Chart, c.Version, c.Digest)
	for _, u := range append(slices.Clone(objs), hookObjects(hooks)...) {
		if utils.IsSecret(u) {
			fmt.Fprintf(h, "secret %s\n", object.IDOf(u))
			continue
		}
		fmt.Fprintf(h, "%s %s\n", object.IDOf(u), object.Digest(u))
	}
	for _, k := range hooks {
		fmt.Fprintf(h, "hook %s %v %d %v\n", object.IDOf(k.Object), k.Events, k.Weight, k.DeletePolicies)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
