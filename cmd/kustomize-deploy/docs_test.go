package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/cli from the commands (make docs)")

// docsDir holds the CLI reference the README and docs/ link to.
const docsDir = "../../docs/cli"

// The reference in docs/cli is generated from the commands themselves, so
// a command or flag changed without regenerating it (make docs) fails here
// and the links to it stay true.
func TestCLIReferenceIsCurrent(t *testing.T) {
	got := t.TempDir()
	if err := writeReference(got); err != nil {
		t.Fatal(err)
	}
	if *updateDocs {
		if err := os.RemoveAll(docsDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(docsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeReference(docsDir); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, _ := filepath.Glob(filepath.Join(docsDir, "*.md"))
	have, _ := filepath.Glob(filepath.Join(got, "*.md"))
	if len(want) != len(have) {
		t.Errorf("docs/cli has %d pages, the commands make %d: run make docs", len(want), len(have))
	}
	for _, p := range have {
		name := filepath.Base(p)
		fresh, _ := os.ReadFile(p)
		old, err := os.ReadFile(filepath.Join(docsDir, name))
		if err != nil || !bytes.Equal(old, fresh) {
			t.Errorf("docs/cli/%s is stale: run make docs", name)
		}
	}
}

// Every command of ours shows how it is used.
func TestEveryCommandHasExamples(t *testing.T) {
	root := newRootCommand(&env{getenv: func(string) string { return "" }, masker: mask.New()})
	for _, c := range root.Commands() {
		if c.Example == "" || !strings.Contains(c.Example, "kustomize-deploy "+c.Name()) {
			t.Errorf("%s has no example of itself", c.Name())
		}
	}
}

// writeReference writes one markdown page per command into dir.
func writeReference(dir string) error {
	root := newRootCommand(&env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }, masker: mask.New()})
	var noTag func(*cobra.Command)
	noTag = func(c *cobra.Command) {
		c.DisableAutoGenTag = true // no date: the pages are the same on every machine
		for _, sub := range c.Commands() {
			noTag(sub)
		}
	}
	root.InitDefaultCompletionCmd() // added when a command line runs, otherwise
	noTag(root)
	return doc.GenMarkdownTree(root, dir)
}
