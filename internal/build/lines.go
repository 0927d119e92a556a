package build

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/drone/envsubst"
	yamlv2 "go.yaml.in/yaml/v2"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// yamlLineOf matches the line the YAML parser puts in a syntax error,
// the one place it gives it (it has no error type for them).
var yamlLineOf = regexp.MustCompile(`^yaml: line (\d+):`)

// documents decodes data's YAML documents as nodes, for their lines, up
// to the first syntax error (err).
func documents(data []byte) ([]*yamlv3.Node, error) {
	var out []*yamlv3.Node
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var n yamlv3.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, &n)
	}
}

// parseErrorLine is the line of data's first YAML syntax error, 0 if it
// has none (or gives no line). It asks yaml.v2, the parser kustomize and
// sigs.k8s.io/yaml use: yaml.v3 counts from 0 the line of some errors.
func parseErrorLine(data []byte) int {
	dec := yamlv2.NewDecoder(bytes.NewReader(data))
	var err error
	for err == nil {
		var v any
		err = dec.Decode(&v)
	}
	if errors.Is(err, io.EOF) {
		return 0
	}
	m := yamlLineOf.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// manifestLine is the line where the i-th (0-based) document of data
// that decodeDocuments keeps starts: empty documents are not counted, as
// it drops them. 0 when there is no such document.
func manifestLine(data []byte, i int) int {
	docs, _ := documents(data)
	for _, d := range docs {
		if len(d.Content) == 0 || d.Content[0].Tag == "!!null" {
			continue
		}
		if i == 0 {
			return d.Content[0].Line
		}
		i--
	}
	return 0
}

// entryLine is the line of entry in the list field of the kustomization
// data, 0 if it is not there as written.
func entryLine(data []byte, field, entry string) int {
	docs, _ := documents(data)
	if len(docs) == 0 || len(docs[0].Content) == 0 {
		return 0
	}
	root := docs[0].Content[0]
	if root.Kind != yamlv3.MappingNode {
		return 0
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != field || root.Content[i+1].Kind != yamlv3.SequenceNode {
			continue
		}
		for _, item := range root.Content[i+1].Content {
			if item.Kind == yamlv3.ScalarNode && item.Value == entry {
				return item.Line
			}
		}
	}
	return 0
}

// isRemoteSource reports a source that is not a file of the repository
// (repo//path?ref=, see sourceOf).
func isRemoteSource(src string) bool { return strings.Contains(src, "//") }

// placeholderLine is the line, in file (relative to root), of the field
// holding the placeholder that failed substituting id's object: the first
// whose text is no valid ${} form, else the first naming a variable
// without a value, else the first with a placeholder. It looks in id's
// document first, then (id's name may come from a transformation) in
// every document of the file. 0 when there is no root, the file cannot
// be read or no field matches.
func placeholderLine(root, file string, id object.ID, values map[string]string) int {
	if root == "" {
		return 0
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return 0
	}
	docs, _ := documents(data)
	at := object.Line(data, id)
	var own []*yamlv3.Node
	for _, d := range docs {
		if at > 0 && len(d.Content) > 0 && d.Content[0].Line == at {
			own = append(own, d)
		}
	}
	badForm := func(s string) bool {
		_, err := envsubst.Parse(s)
		return err != nil
	}
	noValue := func(s string) bool {
		missing := false
		_, _ = envsubst.Eval(s, func(name string) string {
			_, ok := values[name]
			missing = missing || !ok
			return values[name]
		})
		return missing
	}
	for _, match := range []func(string) bool{badForm, noValue, func(string) bool { return true }} {
		for _, in := range [][]*yamlv3.Node{own, docs} {
			for _, d := range in {
				if line := scalarLine(d, func(s string) bool { return strings.Contains(s, "${") && match(s) }); line > 0 {
					return line
				}
			}
		}
	}
	return 0
}

// scalarLine is the line of the first scalar (a key or a value) below n
// whose text satisfies match, 0 if none does.
func scalarLine(n *yamlv3.Node, match func(string) bool) int {
	if n.Kind == yamlv3.ScalarNode && match(n.Value) {
		return n.Line
	}
	for _, c := range n.Content {
		if line := scalarLine(c, match); line > 0 {
			return line
		}
	}
	return 0
}
