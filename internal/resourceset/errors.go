package resourceset

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Error is a problem of one ResourceSet or ResourceSetInputProvider: it
// names the object and where it is (the line of the field at fault when
// the file says it, else the object's), then what is wrong.
type Error struct {
	Object object.ID
	// File is relative to the repository root ("" when unknown); Line is
	// 1-based, 0 when unknown.
	File string
	Line int
	Err  error
}

func (e *Error) Error() string {
	at := e.File
	if e.Line > 0 {
		at = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	name := e.Object.String()
	if at == "" {
		return fmt.Sprintf("%s: %v", name, e.Err)
	}
	return fmt.Sprintf("%s (%s): %v", name, at, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// DependencyError is a ResourceSet's spec.dependsOn that is not met: the
// operator would not expand it yet.
type DependencyError struct {
	// Dependency names the object depended on: apiVersion/Kind/namespace/name.
	Dependency string
	Err        error
}

func (e *DependencyError) Error() string {
	return fmt.Sprintf("dependency %s: %v", e.Dependency, e.Err)
}

func (e *DependencyError) Unwrap() error { return e.Err }

// IsDependency says whether err is (or joins only) dependencies not met.
func IsDependency(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !IsDependency(e) {
				return false
			}
		}
		return len(j.Unwrap()) > 0
	}
	var d *DependencyError
	return errors.As(err, &d)
}

// locate is the line, in data, of the field at path (string keys, int
// indexes) of the document holding object id (matched by kind and name);
// of the deepest part of path found; of the object with path nil; 0 when
// data does not hold it.
func locate(data []byte, id object.ID, path []any) int {
	n := node(data, id, path)
	if n == nil {
		return 0
	}
	return n.Line
}

// isBlock says whether the field at path is a literal or folded block
// scalar (its lines then follow the indicator's line one for one).
func isBlock(data []byte, id object.ID, path []any) bool {
	n := node(data, id, path)
	return n != nil && (n.Style&(yamlv3.LiteralStyle|yamlv3.FoldedStyle)) != 0
}

// node finds the node locate names.
func node(data []byte, id object.ID, path []any) *yamlv3.Node {
	if len(data) == 0 {
		return nil
	}
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var doc yamlv3.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) || err != nil {
			return nil
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		kind, meta := field(root, "kind"), field(root, "metadata")
		if kind == nil || meta == nil || kind.Value != id.Kind {
			continue
		}
		if name := field(meta, "name"); name == nil || name.Value != id.Name {
			continue
		}
		at := root
		for _, p := range path {
			var next *yamlv3.Node
			switch k := p.(type) {
			case string:
				next = field(at, k)
			case int:
				if at.Kind == yamlv3.SequenceNode && k < len(at.Content) {
					next = at.Content[k]
				}
			}
			if next == nil {
				break
			}
			at = next
		}
		return at
	}
}

// field is the value of key in mapping n, nil when none.
func field(n *yamlv3.Node, key string) *yamlv3.Node {
	if n == nil || n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
