package resourceset

import (
	"cmp"
	"fmt"
	"hash/adler32"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// Input sets are combined as the operator combines them: the
// ResourceSet's own spec.inputs first, then each provider's, providers in
// the order of their apiVersion, kind, namespace and name. Every input set
// is told where it came from (inputs.provider: apiVersion, kind, name,
// namespace). Flatten (the default) concatenates them; Permute makes
// their Cartesian product, each provider's set under its name normalized
// (see normalizeKey), with an id of its own (at most maxPermutations).

// maxPermutations is the operator's bound on the input sets Permute
// makes.
const maxPermutations = 10000

// Strategies.
const (
	strategyFlatten = "Flatten"
	strategyPermute = "Permute"
)

// inputID is the operator's short, opaque id of an input set: the Adler-32
// checksum of s, in decimal.
func inputID(s string) string {
	return fmt.Sprint(adler32.Checksum([]byte(s)))
}

// normalizeKey is the operator's key for a provider's input sets under
// Permute: lower case; spaces and punctuation become "_"; anything else
// outside [a-z0-9] is dropped; runs of "_" are one, none at either end.
func normalizeKey(name string) string {
	mapped := strings.Map(func(r rune) rune {
		r = unicode.ToLower(r)
		switch {
		case unicode.IsSpace(r) || unicode.IsPunct(r):
			return '_'
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return r
		}
		return -1
	}, name)
	var words []string
	for w := range strings.SplitSeq(mapped, "_") {
		if w != "" {
			words = append(words, w)
		}
	}
	return strings.Join(words, "_")
}

// source is an object that gives input sets: the ResourceSet itself or
// one of its providers.
type source struct {
	apiVersion, kind, namespace, name string
	inputs                            []map[string]any
}

// compareSources orders providers as the operator does (by GVK, then
// namespace, then name).
func compareSources(a, b source) int {
	return cmp.Or(strings.Compare(a.apiVersion+", Kind="+a.kind, b.apiVersion+", Kind="+b.kind),
		strings.Compare(a.namespace, b.namespace), strings.Compare(a.name, b.name))
}

// combine combines the input sets of set (the ResourceSet's own) and
// providers as strategy says.
func combine(set source, providers []source, strategy string, includeEmpty bool) ([]map[string]any, error) {
	providers = slices.Clone(providers)
	slices.SortFunc(providers, compareSources)
	all := append([]source{set}, providers...)
	for i := range all {
		all[i].inputs = withProvider(all[i])
	}
	switch cmp.Or(strategy, strategyFlatten) {
	case strategyFlatten:
		var out []map[string]any
		for _, s := range all {
			out = append(out, s.inputs...)
		}
		return out, nil
	case strategyPermute:
		return permute(all, includeEmpty)
	default:
		return nil, fmt.Errorf("spec.inputStrategy.name %q: not Flatten or Permute", strategy)
	}
}

// withProvider returns s's input sets, each told where it came from.
func withProvider(s source) []map[string]any {
	out := make([]map[string]any, len(s.inputs))
	for i, in := range s.inputs {
		m := maps.Clone(in)
		m["provider"] = map[string]any{"apiVersion": s.apiVersion, "kind": s.kind, "name": s.name, "namespace": s.namespace}
		out[i] = m
	}
	return out
}

// permute is the Cartesian product of the sources' input sets, each under
// its source's normalized name, with an id naming the combination. A
// source with no input set is left out, unless includeEmpty (then there
// is no combination at all).
func permute(sources []source, includeEmpty bool) ([]map[string]any, error) {
	type scoped struct {
		key  string
		sets []map[string]any
	}
	var lists []scoped
	total := 0
	for _, s := range sources {
		if len(s.inputs) == 0 && !includeEmpty {
			continue
		}
		if len(lists) == 0 {
			total = len(s.inputs)
		} else {
			total *= len(s.inputs)
		}
		if total > maxPermutations {
			return nil, fmt.Errorf("adding %s %s with %d input sets makes more than %d permutations", s.kind, s.name, len(s.inputs), maxPermutations)
		}
		key := normalizeKey(s.name)
		if key == "" {
			return nil, fmt.Errorf("%s %q: its name normalized is empty", s.kind, s.name)
		}
		lists = append(lists, scoped{key: key, sets: s.inputs})
	}
	if len(lists) == 0 || total == 0 {
		return []map[string]any{}, nil
	}
	out := make([]map[string]any, 0, total)
	idx := make([]int, len(lists))
	for {
		perm := map[string]any{}
		parts := make([]string, len(lists))
		for i, l := range lists {
			perm[l.key] = l.sets[idx[i]]
			parts[i] = fmt.Sprintf("%s=%d", l.key, idx[i])
		}
		perm["id"] = inputID(strings.Join(parts, "/"))
		out = append(out, perm)
		// The next combination, the last list turning fastest.
		i := len(lists) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(lists[i].sets) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out, nil
		}
	}
}
