package validate_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// load reads the YAML documents of testdata files as internal/build
// renders them (integers as int64), each object's source being its file.
func load(t testing.TB, files ...string) ([]*unstructured.Unstructured, map[object.ID]string) {
	t.Helper()
	var objs []*unstructured.Unstructured
	sources := map[object.ID]string{}
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			js, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj map[string]any
			if err := utiljson.Unmarshal(js, &obj); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(obj) == 0 {
				continue
			}
			u := &unstructured.Unstructured{Object: obj}
			objs = append(objs, u)
			sources[object.IDOf(u)] = f
		}
	}
	return objs, sources
}
