package apply

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// A Kustomization's spec.ignore (Flux 2.9) leaves fields, by JSON
// pointer, of the objects its rules select to whatever else manages them
// in the cluster (an autoscaler's replicas, a webhook's defaults), as
// kustomize-controller passes them to fluxcd/pkg/ssa: the dry-run compares
// objects without them (ssa.DiffOptions.DriftIgnoreRules), so a change
// there alone is no change and no drift, and diffs do not show them; an
// object applied for another change is sent with the live value at each
// ignored path that differs (or without the field, when another
// server-side apply manager owns it), so the apply does not revert it;
// ssa's ApplyAll does the same (ApplyOptions.DriftIgnoreRules).

// ignoreRules are Options.Ignore compiled: ssa's selectors, one per rule
// (ssa's own CompiledIgnoreRules keys rules by selector, so rules without
// one would collapse into one).
type ignoreRules []ignoreRule

type ignoreRule struct {
	selector *jsondiff.SelectorRegex // nil selects every object
	paths    []string
}

// compileIgnore compiles rules, refusing a path that is no JSON pointer.
func compileIgnore(rules []jsondiff.IgnoreRule) (ignoreRules, error) {
	var out ignoreRules
	for i, r := range rules {
		sr, err := jsondiff.NewSelectorRegex(r.Selector)
		if err != nil {
			return nil, fmt.Errorf("ignore rule %d: %w", i, err)
		}
		for _, p := range r.Paths {
			if p != "" && !strings.HasPrefix(p, "/") {
				return nil, fmt.Errorf("ignore rule %d: %q is not a JSON pointer such as /spec/replicas", i, p)
			}
		}
		out = append(out, ignoreRule{selector: sr, paths: r.Paths})
	}
	return out, nil
}

// ssaRules are the rules as ssa takes them: those without a selector as
// one rule, since ssa keys them by selector.
func ssaRules(rules []jsondiff.IgnoreRule) []jsondiff.IgnoreRule {
	var all []string
	var out []jsondiff.IgnoreRule
	for _, r := range rules {
		if r.Selector == nil {
			all = append(all, r.Paths...)
			continue
		}
		out = append(out, r)
	}
	if len(all) > 0 {
		out = append(out, jsondiff.IgnoreRule{Paths: all})
	}
	return out
}

// paths are the ignored paths of u.
func (rs ignoreRules) paths(u *unstructured.Unstructured) []string {
	var out []string
	for _, r := range rs {
		if r.selector == nil || r.selector.MatchUnstructured(u) {
			out = append(out, r.paths...)
		}
	}
	return out
}

// keepIgnored returns a copy of desired in which every ignored path
// whose value differs from live's has live's value, or is left out when
// live lacks it or another server-side apply manager than ours owns it
// (ssa's strip-or-adopt); and the paths it changed. Root ("") ignores
// the whole object: it is sent as live has it.
func keepIgnored(desired, live *unstructured.Unstructured, paths []string) (*unstructured.Unstructured, []string) {
	out := desired.DeepCopy()
	var changed []string
	for _, p := range paths {
		tokens, ok := object.PointerTokens(p)
		if !ok {
			continue
		}
		want, inDesired := object.PointerGet(out.Object, tokens)
		have, inLive := object.PointerGet(live.Object, tokens)
		if inDesired == inLive && apiequality.Semantic.DeepEqual(want, have) {
			continue
		}
		switch {
		case len(tokens) == 0:
			return live.DeepCopy(), []string{p}
		case !inLive || ownedByAnotherApplier(live, tokens):
			if !inDesired || !object.PointerRemove(out.Object, tokens) {
				continue
			}
		default:
			if !object.PointerSet(out.Object, tokens, runtime.DeepCopyJSONValue(have)) {
				continue
			}
		}
		changed = append(changed, p)
	}
	return out, changed
}

// ownedByAnotherApplier says whether a server-side apply manager other
// than ours owns the field at tokens of live, by its managedFields. A
// path through a list is taken as not owned (ssa's fallback too, when it
// cannot resolve a path).
func ownedByAnotherApplier(live *unstructured.Unstructured, tokens []string) bool {
	for _, mf := range live.GetManagedFields() {
		if mf.Manager == FieldManager || mf.Operation != "Apply" || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if json.Unmarshal(mf.FieldsV1.Raw, &fields) != nil {
			continue
		}
		cur := fields
		owned := true
		for _, t := range tokens {
			next, ok := cur["f:"+t].(map[string]any)
			if !ok {
				owned = false
				break
			}
			cur = next
		}
		if owned {
			return true
		}
	}
	return false
}
