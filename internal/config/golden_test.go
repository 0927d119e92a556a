package config

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// testRoot returns testdata/name as an absolute path with symlinks
// evaluated, as Read wants its root.
func testRoot(t *testing.T, name string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("testdata", name))
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// render prints a Set as YAML, encrypted documents as text. Empty strings
// and lists and nil maps and pointers are left out, so a golden file shows
// what was set; false, zero and a set but empty struct are kept.
func render(t *testing.T, set *Set) string {
	t.Helper()
	var n kyaml.Node
	if err := n.Encode(set); err != nil {
		t.Fatal(err)
	}
	dropEmpty(&n)
	b, err := kyaml.Marshal(&n)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func dropEmpty(n *kyaml.Node) {
	if n.Kind != kyaml.MappingNode {
		for _, c := range n.Content {
			dropEmpty(c)
		}
		return
	}
	var kept []*kyaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		empty := v.Kind == kyaml.ScalarNode && (v.Value == "" || v.ShortTag() == "!!null") ||
			(v.Kind == kyaml.SequenceNode || v.Kind == kyaml.MappingNode) && len(v.Content) == 0
		if empty {
			continue
		}
		if k.Value == "raw" && v.Kind == kyaml.SequenceNode {
			v = bytesAsText(v)
		}
		dropEmpty(v)
		kept = append(kept, k, v)
	}
	n.Content = kept
}

// bytesAsText turns a []byte yaml.v3 wrote as a list of numbers back into
// text.
func bytesAsText(n *kyaml.Node) *kyaml.Node {
	b := make([]byte, len(n.Content))
	for i, c := range n.Content {
		v, _ := strconv.Atoi(c.Value)
		b[i] = byte(v)
	}
	return &kyaml.Node{Kind: kyaml.ScalarNode, Tag: "!!str", Value: string(b), Style: kyaml.LiteralStyle}
}

// golden compares got with testdata/name.golden, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(string(want)), B: difflib.SplitLines(got),
			FromFile: path, ToFile: "got", Context: 3,
		})
		t.Errorf("output differs (run go test -update after checking):\n%s", diff)
	}
}

// TestReadGolden reads whole repositories laid out as Flux's examples are.
func TestReadGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string // of the repository under testdata/ and of the golden file
		dir  string // the directory read, in the repository
	}{
		// fluxcd/flux2-kustomize-helm-example: infrastructure, then apps,
		// beside flux bootstrap's flux-system directory.
		{"flux-example", "clusters/production"},
		// The same as of Flux 2.7: an ArtifactGenerator splits the
		// repository into ExternalArtifacts the Kustomizations build.
		{"flux-example-2.7", "clusters/production"},
		// istio → webapp-common → webapp-backend → webapp-frontend, with
		// a ConfigMap and an encrypted Secret to substitute from.
		{"webapp", "clusters/dev"},
		// One Kustomization of each API version, with its own fields.
		{"versions", "."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := testRoot(t, tt.name)
			set, err := Read(root, filepath.Join(root, tt.dir))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, render(t, set))
		})
	}
}
