// Package docs holds the parts of the documentation the code defines: the
// GitHub Action's inputs and outputs tables, generated from action.yml into
// docs/action.md, and a check that every relative link between the
// documents points at a file and a heading that exist. Its tests fail when
// either is stale; `make docs` rewrites the tables.
package docs

import (
	"bytes"
	"fmt"
	"regexp"
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
	Name string
	// Description is what GitHub shows (the Marketplace, editors' hints):
	// at most MaxInputDescription characters.
	Description string
	// Details is the reference text: the comment lines right above the
	// input in action.yml, if any.
	Details string
	// Group is the group the input belongs to: the title of the last
	// "# == Title ==" comment line at or before it; GroupIntro, the lines
	// under that title.
	Group, GroupIntro string
	Required          bool
	Default           string
	// Deprecated is the input's deprecationMessage.
	Deprecated string
}

// Output is one output of action.yml.
type Output struct {
	Name        string
	Description string
}

// MaxInputDescription is the longest description an input may have: the
// first screen of the Action shows every input's, and the reference lives
// in the comment above it (and in docs/action.md).
const MaxInputDescription = 200

// groupTitle is the comment line that starts a group of inputs.
var groupTitle = regexp.MustCompile(`^# == (.+) ==$`)

// ReadAction parses action.yml. Every input and output must have a
// description (it is their documentation), an input's at most
// MaxInputDescription characters, and every input must be in a group.
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
	group, intro := "", ""
	err := eachEntry(&file.Inputs, func(name string, key, value *yaml.Node) error {
		var in struct {
			Description        string `yaml:"description"`
			Required           bool   `yaml:"required"`
			Default            string `yaml:"default"`
			DeprecationMessage string `yaml:"deprecationMessage"`
		}
		if err := value.Decode(&in); err != nil {
			return fmt.Errorf("action.yml: input %s: %w", name, err)
		}
		switch n := len([]rune(strings.TrimSpace(in.Description))); {
		case n == 0:
			errs = append(errs, fmt.Sprintf("input %s has no description", name))
		case n > MaxInputDescription:
			errs = append(errs, fmt.Sprintf("input %s: description of %d characters, want at most %d (the reference goes in the comment above it)", name, n, MaxInputDescription))
		}
		var details []string
		for _, para := range strings.Split(key.HeadComment, "\n\n") {
			lines := commentLines(para)
			if len(lines) > 0 {
				if m := groupTitle.FindStringSubmatch("# " + lines[0]); m != nil {
					group, intro = m[1], strings.Join(lines[1:], " ")
					continue
				}
			}
			details = append(details, lines...)
		}
		if group == "" {
			errs = append(errs, fmt.Sprintf("input %s is in no group (a line \"# == Title ==\" above it)", name))
		}
		a.Inputs = append(a.Inputs, Input{Name: name, Description: in.Description, Details: strings.Join(details, " "),
			Group: group, GroupIntro: intro, Required: in.Required, Default: in.Default, Deprecated: in.DeprecationMessage})
		return nil
	})
	if err != nil {
		return Action{}, err
	}
	err = eachEntry(&file.Outputs, func(name string, _, value *yaml.Node) error {
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

// commentLines are the lines of a comment block without their "#".
func commentLines(block string) []string {
	var out []string
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#"))
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// eachEntry calls fn for each key of a mapping node, in order. An absent
// node (no such section) has no entries.
func eachEntry(n *yaml.Node, fn func(name string, key, value *yaml.Node) error) error {
	if n.Kind == 0 {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("action.yml: line %d: want a mapping of names", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := fn(n.Content[i].Value, n.Content[i], n.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// InputsTable renders the inputs group by group: a heading (level 3)
// with the group's introduction, a table of the inputs' descriptions, and
// the details of those that have them.
func InputsTable(a Action) string {
	var b strings.Builder
	for i := 0; i < len(a.Inputs); {
		g := a.Inputs[i].Group
		j := i
		for j < len(a.Inputs) && a.Inputs[j].Group == g {
			j++
		}
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s\n\n", g)
		if intro := a.Inputs[i].GroupIntro; intro != "" {
			b.WriteString(wrap(prose(intro)) + "\n\n")
		}
		b.WriteString("| input | default | description |\n|---|---|---|\n")
		for _, in := range a.Inputs[i:j] {
			def := ""
			switch {
			case in.Required:
				def = "required"
			case in.Default != "":
				def = code(in.Default)
			}
			desc := in.Description
			if in.Deprecated != "" {
				desc = "**Deprecated.** " + in.Deprecated
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", code(in.Name), def, cell(desc))
		}
		var details []string
		for _, in := range a.Inputs[i:j] {
			if in.Details != "" {
				details = append(details, wrap(fmt.Sprintf("- %s: %s", code(in.Name), prose(in.Details))))
			}
		}
		if len(details) > 0 {
			b.WriteString("\n" + strings.Join(details, "\n") + "\n")
		}
		i = j
	}
	return b.String()
}

// wrap is s with its lines folded at about 76 characters (continuation
// lines indented by two spaces, for list items): the generated text reads
// in a diff and a terminal too.
func wrap(s string) string {
	var b strings.Builder
	col := 0
	for i, w := range strings.Fields(s) {
		switch {
		case i == 0:
		case col+1+len(w) > 76:
			b.WriteString("\n  ")
			col = 2
		default:
			b.WriteString(" ")
			col++
		}
		b.WriteString(w)
		col += len(w)
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
	return outsideCode(strings.Join(strings.Fields(s), " "), func(p string, code bool) string {
		p = strings.ReplaceAll(p, "|", `\|`)
		if !code {
			p = strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(p)
		}
		return p
	})
}

// prose is text for a paragraph or a list item: '<' and '>' outside code
// spans as entities.
func prose(s string) string {
	return outsideCode(s, func(p string, code bool) string {
		if code {
			return p
		}
		return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(p)
	})
}

// outsideCode applies fn to the parts of s between backquotes, telling it
// whether each is a code span.
func outsideCode(s string, fn func(part string, code bool) string) string {
	parts := strings.Split(s, "`")
	for i, p := range parts {
		parts[i] = fn(p, i%2 == 1)
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
