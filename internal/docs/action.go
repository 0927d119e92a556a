// Package docs holds the parts of the documentation the code defines: the
// GitHub Action's inputs and outputs tables, generated from action.yml into
// docs/action.md, and a check that every relative link between the
// documents points at a file and a heading that exist. Its tests fail when
// either is stale; `make docs` rewrites the tables.
package docs

import (
	"bytes"
	"fmt"
	"strings"

	yaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// Action is what action.yml declares, in the order it declares it.
type Action struct {
	Inputs  []Input
	Outputs []Output
}

// Input is one input of action.yml.
type Input struct {
	Name        string
	Description string
	Required    bool
	Default     string
}

// Output is one output of action.yml.
type Output struct {
	Name        string
	Description string
}

// ReadAction parses action.yml. Every input and output must have a
// description: it is their documentation.
func ReadAction(data []byte) (Action, error) {
	var file struct {
		Inputs  yaml.Node `yaml:"inputs"`
		Outputs yaml.Node `yaml:"outputs"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		return Action{}, fmt.Errorf("action.yml: %w", err)
	}
	var a Action
	var errs []string
	err := eachEntry(&file.Inputs, func(name string, value *yaml.Node) error {
		var in struct {
			Description string `yaml:"description"`
			Required    bool   `yaml:"required"`
			Default     string `yaml:"default"`
		}
		if err := value.Decode(&in); err != nil {
			return fmt.Errorf("action.yml: input %s: %w", name, err)
		}
		if strings.TrimSpace(in.Description) == "" {
			errs = append(errs, fmt.Sprintf("input %s has no description", name))
		}
		a.Inputs = append(a.Inputs, Input{Name: name, Description: in.Description, Required: in.Required, Default: in.Default})
		return nil
	})
	if err != nil {
		return Action{}, err
	}
	err = eachEntry(&file.Outputs, func(name string, value *yaml.Node) error {
		var out struct {
			Description string `yaml:"description"`
		}
		if err := value.Decode(&out); err != nil {
			return fmt.Errorf("action.yml: output %s: %w", name, err)
		}
		if strings.TrimSpace(out.Description) == "" {
			errs = append(errs, fmt.Sprintf("output %s has no description", name))
		}
		a.Outputs = append(a.Outputs, Output{Name: name, Description: out.Description})
		return nil
	})
	if err != nil {
		return Action{}, err
	}
	if len(errs) > 0 {
		return Action{}, fmt.Errorf("action.yml: %s", strings.Join(errs, "; "))
	}
	if len(a.Inputs) == 0 {
		return Action{}, fmt.Errorf("action.yml: no inputs")
	}
	return a, nil
}

// eachEntry calls fn for each key of a mapping node, in order. An absent
// node (no such section) has no entries.
func eachEntry(n *yaml.Node, fn func(name string, value *yaml.Node) error) error {
	if n.Kind == 0 {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("action.yml: line %d: want a mapping of names", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := fn(n.Content[i].Value, n.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// InputsTable renders the inputs as a markdown table, one row per input.
func InputsTable(a Action) string {
	var b strings.Builder
	b.WriteString("| input | default | description |\n|---|---|---|\n")
	for _, in := range a.Inputs {
		def := ""
		switch {
		case in.Required:
			def = "required"
		case in.Default != "":
			def = code(in.Default)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", code(in.Name), def, cell(in.Description))
	}
	return b.String()
}

// OutputsTable renders the outputs as a markdown table, one row per output.
func OutputsTable(a Action) string {
	var b strings.Builder
	b.WriteString("| output | description |\n|---|---|\n")
	for _, out := range a.Outputs {
		fmt.Fprintf(&b, "| %s | %s |\n", code(out.Name), cell(out.Description))
	}
	return b.String()
}

// code is s as a code span in a table cell.
func code(s string) string {
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// cell is a description as one table cell: on one line, with '|' escaped
// (GitHub needs that inside code spans too) and, outside code spans, '<'
// and '>' as entities, so that "<name>" shows instead of vanishing as an
// HTML tag.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	parts := strings.Split(s, "`")
	for i, p := range parts {
		p = strings.ReplaceAll(p, "|", `\|`)
		if i%2 == 0 { // outside a code span
			p = strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(p)
		}
		parts[i] = p
	}
	return strings.Join(parts, "`")
}

// Markers around a generated section of a document.
func beginMarker(section string) string {
	return "<!-- begin generated " + section + ": make docs writes this from action.yml -->"
}
func endMarker(section string) string { return "<!-- end generated " + section + " -->" }

// Splice replaces what lies between the markers of section in doc with
// generated. Both markers must be there, once each, on lines of their own.
func Splice(doc []byte, section, generated string) ([]byte, error) {
	begin, end := []byte(beginMarker(section)+"\n"), []byte("\n"+endMarker(section))
	if n := bytes.Count(doc, begin); n != 1 {
		return nil, fmt.Errorf("want the line %q once, found it %d times", beginMarker(section), n)
	}
	if n := bytes.Count(doc, end); n != 1 {
		return nil, fmt.Errorf("want the line %q once, found it %d times", endMarker(section), n)
	}
	i := bytes.Index(doc, begin) + len(begin)
	j := bytes.Index(doc, end)
	if j < i-1 {
		return nil, fmt.Errorf("%q comes before %q", endMarker(section), beginMarker(section))
	}
	var out bytes.Buffer
	out.Write(doc[:i])
	out.WriteString(strings.TrimSuffix(generated, "\n"))
	out.Write(doc[j:])
	return out.Bytes(), nil
}

// ActionReference is doc (docs/action.md) with its inputs and outputs
// tables generated from actionYML.
func ActionReference(doc, actionYML []byte) ([]byte, error) {
	a, err := ReadAction(actionYML)
	if err != nil {
		return nil, err
	}
	doc, err = Splice(doc, "inputs", InputsTable(a))
	if err != nil {
		return nil, fmt.Errorf("inputs table: %w", err)
	}
	doc, err = Splice(doc, "outputs", OutputsTable(a))
	if err != nil {
		return nil, fmt.Errorf("outputs table: %w", err)
	}
	return doc, nil
}
