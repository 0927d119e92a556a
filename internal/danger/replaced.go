package danger

import (
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// RiskNamespaceReplaced is the risk of a Namespace created by a change
// that deletes another.
const RiskNamespaceReplaced = "Namespace replaced"

// MarkReplacedNamespaces flags each Namespace that results create while
// the same change deletes another Namespace (a unit's Namespace renamed,
// or moved to another unit that names it anew): a Namespace cannot be
// renamed, so the objects of the one deleted are deleted with it, not
// moved, and the new one starts empty. A created Namespace is otherwise
// not risky: it replaces nothing. The deletions come from every result
// given (a whole configuration's change), prunes of an inventory
// included. It marks the entries in place, once, and returns how many it
// marked.
func MarkReplacedNamespaces(results ...*result.Result) int {
	var gone []string
	for _, r := range results {
		for _, e := range r.Entries {
			if isNamespace(e) && e.Action == result.Deleted {
				gone = append(gone, e.Object.Name)
			}
		}
	}
	if len(gone) == 0 {
		return 0
	}
	slices.Sort(gone)
	gone = slices.Compact(gone)
	marked := 0
	for _, r := range results {
		for i := range r.Entries {
			e := &r.Entries[i]
			if !isNamespace(*e) || e.Action != result.Created || slices.ContainsFunc(e.Dangers, func(d result.Danger) bool { return d.Risk == RiskNamespaceReplaced }) {
				continue
			}
			e.Dangers = append(e.Dangers, result.Danger{Risk: RiskNamespaceReplaced, Field: "metadata.name", Consequence: replacedConsequence(gone)})
			marked++
		}
	}
	return marked
}

func isNamespace(e result.Entry) bool { return e.Object.Group == "" && e.Object.Kind == "Namespace" }

// replacedConsequence says what creating a Namespace beside the deletion
// of those gone does.
func replacedConsequence(gone []string) string {
	names := gone
	more := ""
	if len(names) > 3 {
		names, more = names[:3], " and more"
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "'" + n + "'"
	}
	noun, pronoun := "Namespace", "its"
	if len(gone) > 1 {
		noun, pronoun = "Namespaces", "their"
	}
	return "created while the same change deletes " + noun + " " + strings.Join(quoted, ", ") + more +
		": a Namespace is not renamed, " + pronoun + " objects are deleted with it, not moved"
}
