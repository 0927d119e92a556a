package config

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// PathPattern is an ArtifactGenerator's spec.pathPattern (Flux 2.9,
// source-watcher): "@alias/apps/{app}/envs/{env}" discovers one artifact
// per directory of the alias's source matching the pattern, each capture
// matching one path segment; spec.artifacts are then templates, their
// name, from and to filled with the captures.
type PathPattern struct {
	// Text is the pattern as written; Alias the source it walks.
	Text, Alias string
	// Names are the captures, in order.
	Names []string
	re    *regexp.Regexp
}

var captureName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParsePathPattern reads text as source-watcher does: @alias/pattern,
// captures {name} each named once.
func ParsePathPattern(text string) (*PathPattern, error) {
	head, pattern, ok := strings.Cut(text, "/")
	if !ok || !strings.HasPrefix(head, "@") || head == "@" || pattern == "" {
		return nil, fmt.Errorf("%q is not @alias/pattern", text)
	}
	p := &PathPattern{Text: text, Alias: strings.TrimPrefix(head, "@")}
	var re strings.Builder
	re.WriteString("^")
	seen := map[string]bool{}
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '{':
			end := strings.IndexByte(pattern[i+1:], '}')
			if end < 0 {
				return nil, fmt.Errorf("%q: the capture at offset %d has no closing brace", text, i)
			}
			name := pattern[i+1 : i+1+end]
			switch {
			case !captureName.MatchString(name):
				return nil, fmt.Errorf("%q: capture %q is not a name ([A-Za-z_][A-Za-z0-9_]*)", text, name)
			case seen[name]:
				return nil, fmt.Errorf("%q: capture %q is named twice", text, name)
			}
			seen[name] = true
			p.Names = append(p.Names, name)
			re.WriteString("(?P<" + name + ">[^/]+)")
			i += end + 1
		case '}':
			return nil, fmt.Errorf("%q: the brace at offset %d closes no capture", text, i)
		default:
			re.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	re.WriteString("$")
	var err error
	if p.re, err = regexp.Compile(re.String()); err != nil {
		return nil, fmt.Errorf("%q: %w", text, err)
	}
	return p, nil
}

// Match returns the captures of dir (slash-separated, relative to the
// alias's source root) as written, or nil when it does not match.
func (p *PathPattern) Match(dir string) map[string]string {
	m := p.re.FindStringSubmatch(dir)
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for i, name := range p.re.SubexpNames() {
		if i > 0 && name != "" {
			out[name] = m[i]
		}
	}
	return out
}

// ArtifactsFor are g's artifacts for one directory its pathPattern
// matched, with its captures (as written): names take the captures lower-
// cased, as source-watcher does (a capture must then be a label value,
// the name an object name), copy operations take them as written, so
// that paths keep their case.
func (g *Generator) ArtifactsFor(captures map[string]string) ([]Artifact, error) {
	lower := map[string]string{}
	for k, v := range captures {
		lower[k] = strings.ToLower(v)
		if errs := validation.IsValidLabelValue(lower[k]); len(errs) > 0 {
			return nil, fmt.Errorf("pathPattern %q: %s=%q is not a label value: %s", g.PathPattern.Text, k, v, strings.Join(errs, "; "))
		}
	}
	out := make([]Artifact, 0, len(g.Artifacts))
	for _, a := range g.Artifacts {
		name, err := renderTemplate(a.Name, lower)
		if err != nil {
			return nil, err
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return nil, fmt.Errorf("pathPattern %q: artifact name %q is not an object name: %s", g.PathPattern.Text, name, strings.Join(errs, "; "))
		}
		r := Artifact{Name: name, Revision: a.Revision, OriginRevision: a.OriginRevision, Copy: make([]Copy, len(a.Copy))}
		for i, c := range a.Copy {
			r.Copy[i] = c
			if r.Copy[i].From, err = renderTemplate(c.From, captures); err != nil {
				return nil, err
			}
			if r.Copy[i].To, err = renderTemplate(c.To, captures); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// renderTemplate fills tmpl's {name} captures from data.
func renderTemplate(tmpl string, data map[string]string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		switch tmpl[i] {
		case '{':
			end := strings.IndexByte(tmpl[i+1:], '}')
			if end < 0 {
				return "", fmt.Errorf("%q: the capture at offset %d has no closing brace", tmpl, i)
			}
			name := tmpl[i+1 : i+1+end]
			v, ok := data[name]
			if !ok {
				return "", fmt.Errorf("%q: {%s} is no capture of spec.pathPattern", tmpl, name)
			}
			b.WriteString(v)
			i += end + 1
		case '}':
			return "", fmt.Errorf("%q: the brace at offset %d closes no capture", tmpl, i)
		default:
			b.WriteByte(tmpl[i])
		}
	}
	return b.String(), nil
}
