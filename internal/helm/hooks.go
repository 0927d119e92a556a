package helm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The release events this tool runs hooks on. A release the unit has not
// recorded is installed; one whose chart or values changed is upgraded.
const (
	PreInstall  = "pre-install"
	PostInstall = "post-install"
	PreUpgrade  = "pre-upgrade"
	PostUpgrade = "post-upgrade"
	// Test is the event of a chart's tests, run after an install or
	// upgrade when spec.test.enable says so.
	Test = "test"
)

// The delete policies of a hook.
const (
	BeforeHookCreation = "before-hook-creation"
	HookSucceeded      = "hook-succeeded"
	HookFailed         = "hook-failed"
)

// runEvents are the events hooks run on here; a hook on none of them
// (pre-delete, post-rollback...) is noted, never run.
var runEvents = []string{PreInstall, PostInstall, PreUpgrade, PostUpgrade, Test}

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

// configDigest sums up what a release is made of, as helm-controller
// decides whether to upgrade: the chart (name, version, digest), the
// merged values, and how the render is shaped (release name and
// namespace, CRD policy, hooks, post-renderers and common metadata). Not
// the rendered objects: an upgrade renders differently from an install
// (.Release.IsUpgrade), and that alone is no new release.
func configDigest(c *Chart, rel *Release, vals map[string]any) string {
	h := sha256.New()
	// Marshalling decoded YAML cannot fail; if it did, the digest would
	// only differ from the last, and the release be upgraded once more.
	parts := map[string]any{
		"chart": []string{c.Chart, c.Version, c.Digest}, "release": []string{rel.ReleaseName, rel.ReleaseNamespace},
		"values": vals, "crds": rel.CRDs, "disableHooks": rel.DisableHooks,
		"postRenderers": rel.PostRenderers, "labels": rel.Labels, "annotations": rel.Annotations,
	}
	if rel.UpgradeCRDsSet {
		parts["upgradeCRDs"] = rel.UpgradeCRDs
	}
	_ = json.NewEncoder(h).Encode(parts)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
