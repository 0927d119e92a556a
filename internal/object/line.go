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
	return Lines(data)(id)
}

// Lines reads data's documents once and returns Line for each id: for
// many objects of one file.
func Lines(data []byte) func(ID) int {
	type doc struct {
		kind, name, namespace string
		hasNamespace          bool
		line                  int
	}
	var docs []doc
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var n yamlv3.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		if len(n.Content) == 0 {
			continue
		}
		root := n.Content[0]
		kind, meta := value(root, "kind"), value(root, "metadata")
		if kind == nil || meta == nil {
			continue
		}
		name, ns := value(meta, "name"), value(meta, "namespace")
		if name == nil {
			continue
		}
		d := doc{kind: kind.Value, name: name.Value, line: root.Line}
		if ns != nil {
			d.namespace, d.hasNamespace = ns.Value, true
		}
		docs = append(docs, d)
	}
	return func(id ID) int {
		for _, d := range docs {
			if d.kind == id.Kind && d.name == id.Name && (!d.hasNamespace || d.namespace == id.Namespace) {
				return d.line
			}
		}
		return 0
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
