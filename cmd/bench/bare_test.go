package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The bare creates send exactly the workload's objects: one per file,
// the Namespace among them.
func TestReadManifestsReadsTheWorkload(t *testing.T) {
	dir := t.TempDir()
	w := newWorkload("bench-bare-100", 100)
	if err := w.Write(dir); err != nil {
		t.Fatal(err)
	}
	objs, err := readManifests(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != w.Size() {
		t.Fatalf("%d objects, want %d", len(objs), w.Size())
	}
	kinds := map[string]int{}
	for _, u := range objs {
		kinds[u.GetKind()]++
	}
	if kinds["Namespace"] != 1 || kinds["Deployment"] != w.Workloads || kinds["ConfigMap"] != w.ConfigMaps {
		t.Errorf("kinds %v", kinds)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readManifests(dir); err == nil {
		t.Error("a file that is not YAML: no error")
	}
	if _, err := readManifests(t.TempDir()); err == nil {
		t.Error("no manifests: no error")
	}
}
