package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Risk says why a change deserves a reviewer's attention before the rest,
// in a word or two; "" when it does not. Risky are: what a run deletes
// (prunes and deletions), changes that need the object recreated (an
// immutable field), the dangers a review finds offline (see package
// danger: the first names the risk), and changes to kinds whose mistakes
// are hard to undo or reach beyond the unit: CRDs, storage, RBAC, and a
// Namespace changed (a new one only when it replaces one: see
// danger.MarkReplacedNamespaces).
func Risk(e result.Entry) string {
	switch {
	case e.Recreate:
		return "needs recreation"
	case e.Action == result.Deleted && e.Stage == result.StagePrune:
		return "prune"
	case e.Action == result.Deleted:
		return "deletion"
	case e.Action != result.Created && e.Action != result.Configured:
		return ""
	case len(e.Dangers) > 0:
		return e.Dangers[0].Risk
	}
	switch e.Object.Group + "/" + e.Object.Kind {
	case "apiextensions.k8s.io/CustomResourceDefinition":
		return "CRD"
	case "/Namespace":
		if e.Action == result.Created {
			return ""
		}
		return "Namespace"
	case "/PersistentVolumeClaim", "/PersistentVolume", "storage.k8s.io/StorageClass":
		return "storage"
	}
	if e.Object.Group == "rbac.authorization.k8s.io" {
		return "RBAC"
	}
	return ""
}

// dangers are e's dangers as markdown: "`spec.selector` cannot be
// changed: …; `…` …"; "" for none.
func dangers(e result.Entry) string {
	parts := make([]string, len(e.Dangers))
	for i, d := range e.Dangers {
		parts[i] = codeSpan(d.Field) + " " + escapeInline(d.Consequence)
	}
	return strings.Join(parts, "; ")
}

// dangersHTML is dangers as one line of HTML, for a <summary>.
func dangersHTML(e result.Entry) string {
	parts := make([]string, len(e.Dangers))
	for i, d := range e.Dangers {
		parts[i] = "<code>" + htmlLine(d.Field) + "</code> " + htmlLine(d.Consequence)
	}
	return strings.Join(parts, "; ")
}

// riskSentence counts the risky changes of results by kind of risk, e.g.
// "**⚠️ 3 risky changes** (2 prune, 1 CRD), listed first"; "" for none.
func riskSentence(results []*result.Result) string {
	by := map[string]int{}
	total := 0
	for _, r := range results {
		if r.Suspension != "" {
			by["suspend"]++
			total++
		}
		for _, e := range r.Entries {
			if k := Risk(e); k != "" {
				by[k]++
				total++
			}
		}
	}
	if total == 0 {
		return ""
	}
	kinds := make([]string, 0, len(by))
	for k := range by {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		return by[kinds[i]] > by[kinds[j]] || by[kinds[i]] == by[kinds[j]] && kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", by[k], k)
	}
	noun := "risky changes"
	if total == 1 {
		noun = "risky change"
	}
	return fmt.Sprintf("**⚠️ %d %s** (%s), listed first.", total, noun, strings.Join(parts, ", "))
}

// suspensionLine says what who ("this PR") does to a unit's
// spec.suspend; "" when nothing.
func suspensionLine(who string, r *result.Result) string {
	switch r.Suspension {
	case result.Suspends:
		return who + " suspends unit " + r.Unit + ": runs skip it, drift checks included, until spec.suspend is false again"
	case result.Resumes:
		return who + " resumes unit " + r.Unit + ": the next apply deploys everything that waited"
	}
	return ""
}
