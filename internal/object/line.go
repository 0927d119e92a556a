package object

import (
	"bytes"
	"errors"
	"io"

	yamlv3 "go.yaml.in/yaml/v3"
)

// Line is the line of the YAML document in data that holds the object
// id (its kind and metadata.name; metadata.namespace too when the
// document names one), for annotations that point into the file; 0 when
// no document matches, as for an object a generator or a chart made.
func Line(data []byte, id ID) int {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var doc yamlv3.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) || err != nil {
			return 0
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		kind, meta := value(root, "kind"), value(root, "metadata")
		if kind == nil || kind.Value != id.Kind || meta == nil {
			continue
		}
		name, ns := value(meta, "name"), value(meta, "namespace")
		if name == nil || name.Value != id.Name || (ns != nil && ns.Value != id.Namespace) {
			continue
		}
		return root.Line
	}
}

// value is the value of key in mapping node n, or nil.
func value(n *yamlv3.Node, key string) *yamlv3.Node {
	if n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
