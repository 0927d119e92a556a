package build_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
)

// BenchmarkBuildPlainDir1000 renders a directory of 1,000 manifests (one per
// file, no kustomization: one is generated each time, as in a run).
func BenchmarkBuildPlainDir1000(b *testing.B) {
	root := b.TempDir()
	for i := range 1000 {
		m := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-%05d\n  namespace: bench\ndata:\n  index: %q\n  settings.properties: |\n    log.level=info\n    pool.size=%d\n", i, fmt.Sprint(i), i%8)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("configmap-%05d.yaml", i)), []byte(m), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		// Build writes the generated kustomization into the directory; a
		// run builds a fresh copy, so generate it again every time.
		if err := os.Remove(filepath.Join(root, "kustomization.yaml")); err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
		res, err := build.Build(ctx, build.Options{Root: root, Path: root})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Objects) != 1000 {
			b.Fatalf("%d objects built, want 1000", len(res.Objects))
		}
	}
}

// BenchmarkInputsDigest1000 hashes what a build of 1,000 manifests read,
// as a run does to decide whether the last build can be reused.
func BenchmarkInputsDigest1000(b *testing.B) {
	root := b.TempDir()
	for i := range 1000 {
		m := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-%05d\n  namespace: bench\ndata:\n  index: %q\n", i, fmt.Sprint(i))
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("configmap-%05d.yaml", i)), []byte(m), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	res, err := build.Build(context.Background(), build.Options{Root: root, Path: root})
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Inputs.Files) < 1000 {
		b.Fatalf("%d inputs recorded, want the 1,000 manifests", len(res.Inputs.Files))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := res.Inputs.Digest(root); err != nil {
			b.Fatal(err)
		}
	}
}
