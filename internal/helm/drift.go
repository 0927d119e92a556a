package helm

import (
	"encoding/json"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// IgnoreRule is one of spec.driftDetection.ignore: JSON pointers to
// fields whose changes in the cluster are left alone, in the objects
// Target selects (all of the release's when it has none). Target selects
// as Flux's kustomize selectors do: group, version and kind exactly, name
// and namespace as anchored regular expressions, labels and annotations
// by selector.
type IgnoreRule struct {
	Paths  []string  `json:"paths"`
	Target *Selector `json:"target,omitempty"`
}

// driftDetection is spec.driftDetection.
type driftDetection struct {
	Mode   string       `json:"mode"`
	Ignore []IgnoreRule `json:"ignore"`
}

// readIgnoreRules reads spec.driftDetection's ignore rules, checking each
// path and selector; mode is read (drift is corrected as the unit's, see
// docs/helm.md).
func readIgnoreRules(raw json.RawMessage) ([]IgnoreRule, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var dd driftDetection
	if err := json.Unmarshal(raw, &dd); err != nil {
		return nil, fmt.Errorf("spec.driftDetection: %w", err)
	}
	for i, r := range dd.Ignore {
		at := fmt.Sprintf("spec.driftDetection.ignore[%d]", i)
		if len(r.Paths) == 0 {
			return nil, fmt.Errorf("%s.paths: none given", at)
		}
		for j, p := range r.Paths {
			if _, err := pointer(p); err != nil {
				return nil, fmt.Errorf("%s.paths[%d]: %w", at, j, err)
			}
		}
		if _, err := r.Target.matcher(); err != nil {
			return nil, fmt.Errorf("%s.target: %w", at, err)
		}
	}
	return dd.Ignore, nil
}

// pointer splits a JSON pointer (RFC 6901) into its tokens.
func pointer(p string) ([]string, error) {
	tokens, ok := object.PointerTokens(p)
	if p == "" || !ok {
		return nil, fmt.Errorf("%q is not a JSON pointer (it starts with /, e.g. /spec/replicas)", p)
	}
	return tokens, nil
}

// matcher compiles s into a predicate; a nil selector selects all.
func (s *Selector) matcher() (func(*unstructured.Unstructured) bool, error) {
	if s == nil {
		return func(*unstructured.Unstructured) bool { return true }, nil
	}
	name, err := anchored(s.Name)
	if err != nil {
		return nil, fmt.Errorf("name: %w", err)
	}
	ns, err := anchored(s.Namespace)
	if err != nil {
		return nil, fmt.Errorf("namespace: %w", err)
	}
	ls, err := labels.Parse(s.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("labelSelector: %w", err)
	}
	as, err := labels.Parse(s.AnnotationSelector)
	if err != nil {
		return nil, fmt.Errorf("annotationSelector: %w", err)
	}
	return func(u *unstructured.Unstructured) bool {
		gvk := u.GroupVersionKind()
		return (s.Group == "" || s.Group == gvk.Group) && (s.Version == "" || s.Version == gvk.Version) && (s.Kind == "" || s.Kind == gvk.Kind) &&
			name.MatchString(u.GetName()) && ns.MatchString(u.GetNamespace()) &&
			ls.Matches(labels.Set(u.GetLabels())) && as.Matches(labels.Set(u.GetAnnotations()))
	}, nil
}

func anchored(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		expr = ".*"
	}
	return regexp.Compile("^(?:" + expr + ")$")
}

// KeepIgnoredDrift gives desired, an object of a release whose chart and
// values did not change, the live object's values at the paths rules
// ignore for it, so that applying desired leaves what changed there in
// the cluster alone (as helm-controller's drift detection ignores them);
// a field the live object lacks is left out of desired. It returns the
// paths it took from live. live nil (the object does not exist) changes
// nothing.
func KeepIgnoredDrift(desired, live *unstructured.Unstructured, rules []IgnoreRule) []string {
	if live == nil {
		return nil
	}
	var kept []string
	for _, r := range rules {
		match, err := r.Target.matcher()
		if err != nil || !match(desired) {
			continue // checked when read
		}
		for _, p := range r.Paths {
			tokens, err := pointer(p)
			if err != nil {
				continue
			}
			v, ok := object.PointerGet(live.Object, tokens)
			if ok {
				ok = object.PointerSet(desired.Object, tokens, runtime.DeepCopyJSONValue(v))
			} else {
				ok = object.PointerRemove(desired.Object, tokens)
			}
			if ok {
				kept = append(kept, p)
			}
		}
	}
	return kept
}

// Selects reports whether any of rules selects u.
func Selects(rules []IgnoreRule, u *unstructured.Unstructured) bool {
	for _, r := range rules {
		if match, err := r.Target.matcher(); err == nil && match(u) {
			return true
		}
	}
	return false
}
