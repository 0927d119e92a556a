package config

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	yaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// gotkRepo writes a flux-example repository whose gotk-components.yaml is
// grown to about 10,000 lines of CustomResourceDefinitions, the size
// flux bootstrap writes.
func gotkRepo(b *testing.B) (root, dir string, components []byte) {
	b.Helper()
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "flux-example"))); err != nil {
		b.Fatal(err)
	}
	dir = filepath.Join(root, "clusters", "production")
	path := filepath.Join(dir, "flux-system", "gotk-components.yaml")
	stub, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	for bytes.Count(components, []byte("\n")) < 10000 {
		components = append(components, stub...)
	}
	if err := os.WriteFile(path, components, 0o644); err != nil {
		b.Fatal(err)
	}
	return root, dir, components
}

func BenchmarkReadGotkComponents(b *testing.B) {
	root, dir, components := gotkRepo(b)
	b.SetBytes(int64(len(components)))
	for b.Loop() {
		if _, err := Read(root, dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeEveryDocument is what Read would cost if it decoded every
// document to learn its kind: the baseline the header scan saves.
func BenchmarkDecodeEveryDocument(b *testing.B) {
	_, _, components := gotkRepo(b)
	b.SetBytes(int64(len(components)))
	for b.Loop() {
		for _, d := range split(components) {
			var n yaml.Node
			if err := yaml.Unmarshal(d.text, &n); err != nil {
				b.Fatal(err)
			}
		}
	}
}
