package docs

import (
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ActionRef is the ref every example of the documentation names: main,
// until the first release exists (a workflow naming @v1 before then fails
// with "unable to find version v1"). After the first release, change it
// and the examples to v1 together.
const ActionRef = "main"

// usesLine is a step using this project's action or its setup action.
var usesLine = regexp.MustCompile(`uses:\s*kustomize-deploy/kustomize-deploy(/setup)?@([^\s#]+)`)

// Every `uses:` line of the documentation and the example workflows names
// ActionRef, the ref docs/action.md tells a newcomer to use, so none of
// them fails when copied. The one exception is the GitHub Enterprise
// Server section, whose input only concerns releases.
func TestUsesLinesNameTheDocumentedRef(t *testing.T) {
	files := documents(t)
	err := filepath.WalkDir(filepath.Join(root, "examples"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(path) != ".yml" && filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range files {
		if f == "CHANGELOG.md" {
			continue // history
		}
		section := ""
		for i, line := range strings.Split(string(readRepoFile(t, f)), "\n") {
			if strings.HasPrefix(line, "#") && strings.HasSuffix(f, ".md") {
				section = line
			}
			m := usesLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			seen++
			if m[2] != ActionRef && !strings.Contains(section, "Enterprise") {
				t.Errorf("%s:%d: uses @%s, want @%s (the ref docs/action.md tells a newcomer to use)", f, i+1, m[2], ActionRef)
			}
		}
	}
	if seen < 10 {
		t.Errorf("only %d uses: lines found: the check checks nothing", seen)
	}
	if !strings.Contains(string(readRepoFile(t, "docs/action.md")), "**Until the first release, `@"+ActionRef+"`**") {
		t.Errorf("docs/action.md does not say to use @%s until the first release", ActionRef)
	}
}
