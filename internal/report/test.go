package report

import (
	"fmt"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Verdict is a unit's outcome in a test of a configuration: PASS, FAIL,
// or SKIP for a unit skipped on purpose (suspended, not selected).
func Verdict(r *result.Result) string {
	switch {
	case r.Failed():
		return "FAIL"
	case r.Reason.SkipsByDesign():
		return "SKIP"
	}
	return "PASS"
}

// TestTable is a test of a configuration (set, rendered offline at one
// revision) as markdown: one row per Kustomization and per HelmRelease
// it rendered, PASS, FAIL or SKIP, why, and the dangers of what a unit
// creates; then how many passed. Texts are escaped, not masked: mask set
// first (Set.MaskTexts).
func TestTable(set *result.Set) string {
	var b strings.Builder
	passed := 0
	b.WriteString("| result | Kustomization / HelmRelease | reason | message |\n|---|---|---|---|\n")
	for _, r := range set.Units {
		verdict := Verdict(r)
		msg, _, _ := strings.Cut(r.Message, "\n")
		if verdict == "PASS" {
			passed++
			msg = fmt.Sprintf("%s objects", thousands(len(r.Entries)))
		}
		fmt.Fprintf(&b, "| %s %s | %s | %s | %s |\n", verdictMark(verdict), verdict, codeSpan(r.Unit), cell(string(r.Reason)), cell(msg))
		for _, rel := range r.Releases {
			fmt.Fprintf(&b, "| %s %s | ↳ %s | | chart %s %s, %s objects |\n", verdictMark(verdict), verdict, codeSpan(rel.HelmRelease),
				cell(rel.Chart), cell(rel.Version), thousands(len(rel.Objects)))
		}
	}
	var dangers []string
	for _, r := range set.Units {
		for _, e := range r.Entries {
			for _, d := range e.Dangers {
				dangers = append(dangers, fmt.Sprintf("- ⚠️ unit %s: %s %s %s", codeSpan(r.Unit), codeSpan(e.Object.String()), codeSpan(d.Field), escapeInline(d.Consequence)))
			}
		}
	}
	if len(dangers) > 0 {
		b.WriteString("\n" + strings.Join(dangers, "\n") + "\n")
	}
	fmt.Fprintf(&b, "\n**%d of %d unit(s) passed.**\n", passed, len(set.Units))
	return b.String()
}

func verdictMark(v string) string {
	switch v {
	case "FAIL":
		return "❌"
	case "SKIP":
		return "⏭️"
	}
	return "✅"
}
