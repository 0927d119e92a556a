package build

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// decodeDocuments splits a YAML (or JSON) stream into its documents,
// dropping empty ones. A document that is not a mapping is returned as nil
// so callers can tell "not a manifest" from "not YAML".
func decodeDocuments(data []byte) ([]map[string]interface{}, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []map[string]interface{}
	for i := 1; ; i++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		var v interface{}
		if err := yaml.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if v == nil {
			continue
		}
		m, _ := v.(map[string]interface{})
		docs = append(docs, m)
	}
}

// isManifest reports whether data is meant to hold Kubernetes objects:
// a document with two of apiVersion, kind and metadata. Other YAML (CI
// configs, Helm values, a chart's Chart.yaml) is not a manifest and is
// left out of generated kustomizations. A manifest missing the third
// field (kind misspelled) is a mistake checkManifest reports: skipped, it
// would silently drop the object, and the run would prune it.
func isManifest(docs []map[string]interface{}) bool {
	for _, d := range docs {
		n := 0
		for _, field := range []string{"apiVersion", "kind", "metadata"} {
			if d[field] != nil {
				n++
			}
		}
		if n >= 2 {
			return true
		}
	}
	return false
}

// checkManifest returns an error unless every document in data is a
// Kubernetes object, and the index in docs of the first that is not.
// Lists are left to kustomize, which expands them.
func checkManifest(docs []map[string]interface{}) (int, error) {
	for i, d := range docs {
		if strings.HasSuffix(str(d["kind"]), "List") && d["items"] != nil {
			continue
		}
		if err := checkObject(d); err != nil {
			return i, fmt.Errorf("document %d: %w", i+1, err)
		}
	}
	return 0, nil
}

// checkManifestFile is checkManifest of file's data (below root), its
// error at the line of the document at fault.
func checkManifestFile(root, file string, data []byte, docs []map[string]interface{}) error {
	i, err := checkManifest(docs)
	if err != nil {
		return atFile(err, root, file, manifestLine(data, i))
	}
	return nil
}

// checkObject returns an error naming the fields every object needs and
// obj lacks.
func checkObject(obj map[string]interface{}) error {
	if obj == nil {
		return errors.New("not a Kubernetes object: expected a mapping with apiVersion, kind and metadata.name")
	}
	var missing []string
	if str(obj["apiVersion"]) == "" {
		missing = append(missing, "apiVersion")
	}
	if str(obj["kind"]) == "" {
		missing = append(missing, "kind")
	}
	meta, _ := obj["metadata"].(map[string]interface{})
	if str(meta["name"]) == "" {
		if generate := str(meta["generateName"]); generate != "" && len(missing) == 0 {
			// Argo CD's and Helm's hook Jobs: created anew each time.
			return fmt.Errorf("metadata.generateName %q without metadata.name: apply needs a fixed name, and generateName cannot be applied declaratively (each apply would create another object); give it a metadata.name", generate)
		}
		missing = append(missing, "metadata.name")
	}
	if len(missing) > 0 {
		return fmt.Errorf("not a Kubernetes object: missing %s (every manifest needs apiVersion, kind and metadata.name)", strings.Join(missing, ", "))
	}
	return nil
}

// str returns v if it is a string, else "".
func str(v interface{}) string {
	s, _ := v.(string)
	return s
}
