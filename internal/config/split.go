package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// document is one YAML document of a file.
type document struct {
	text []byte // from its "---" line, if any, to the next one
	line int    // 1-based line of text's first line in the file
}

// whole is the document's text, from its "---" line if any.
func (d document) whole() []byte { return d.text }

// body is the document without its leading "---" line: what is kept of
// an encrypted document.
func (d document) body() []byte {
	if isMarker(firstLine(d.text)) {
		if i := bytes.IndexByte(d.text, '\n'); i >= 0 {
			return d.text[i+1:]
		}
		return nil
	}
	return d.text
}

// split cuts a file at its "---" lines. A "---" at the start of a line
// ends any block scalar in YAML, so this needs no parser; it is what lets
// Read skip a large CustomResourceDefinition without decoding it.
func split(data []byte) []document {
	var docs []document
	start, startLine, line := 0, 1, 1
	for pos := 0; pos < len(data); line++ {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end >= 0 {
			next = pos + end + 1
		}
		if pos > start && isMarker(data[pos:next]) {
			docs = append(docs, document{text: data[start:pos], line: startLine})
			start, startLine = pos, line
		}
		pos = next
	}
	if start < len(data) {
		docs = append(docs, document{text: data[start:], line: startLine})
	}
	return docs
}

// isMarker says whether line starts a document: "---" alone or followed
// by a space (and content, a comment or a tag).
func isMarker(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := line[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r'
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// header is a document's apiVersion and kind, as a scan of its top-level
// lines finds them: each is "" unless it is given once, as a plain value.
type header struct{ apiVersion, kind string }

// token is a plain apiVersion or kind value.
var token = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)

// scanHeader reads apiVersion and kind from the lines of text that start
// at column 0, without a YAML parser. In a block mapping those lines are
// its keys; a document in flow style or with quoted or complex keys at
// the top yields an empty header.
func scanHeader(text []byte) header {
	var apiVersions, kinds []string
	for len(text) > 0 {
		line := firstLine(text)
		text = text[len(line):]
		if len(text) > 0 {
			text = text[1:]
		}
		line = bytes.TrimRight(line, "\r")
		if len(line) == 0 {
			continue
		}
		switch line[0] {
		case '{', '[', '"', '\'', '?', '&', '!', '*', '%':
			return header{}
		}
		if v, ok := cutKey(line, "apiVersion:"); ok {
			apiVersions = append(apiVersions, v)
		} else if v, ok := cutKey(line, "kind:"); ok {
			kinds = append(kinds, v)
		}
	}
	return header{apiVersion: only(apiVersions), kind: only(kinds)}
}

// only returns the one plain value in vs, else "".
func only(vs []string) string {
	if len(vs) == 1 && token.MatchString(vs[0]) {
		return vs[0]
	}
	return ""
}

// cutKey returns the value of a top-level "key: value" line, unquoted.
func cutKey(line []byte, key string) (string, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(key))
	if !ok {
		return "", false
	}
	if i := bytes.Index(rest, []byte(" #")); i >= 0 {
		rest = rest[:i]
	}
	v := bytes.TrimSpace(rest)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	return string(v), true
}

// skippable says whether the header alone shows that the document is
// neither a Flux Kustomization nor a ConfigMap or Secret, nor looks like a
// Kustomization of an API Read refuses, so it need not be decoded. When in
// doubt it is decoded.
func (h header) skippable() bool {
	switch {
	case h.kind == "":
		return false
	case groupOf(h.apiVersion) == fluxGroup || groupOf(h.apiVersion) == legacyGroup:
		return false // every kind of these groups is read or refused
	case isSourceKindName(h.kind), h.kind == fluxInstanceKind:
		return false
	case h.kind == NotificationProvider || h.kind == NotificationAlert:
		return h.apiVersion != "" && groupOf(h.apiVersion) != notificationGroup
	case !strings.EqualFold(h.kind, kustomizationKind) && h.kind != configMapKind && h.kind != secretKind:
		return true
	case h.apiVersion == "":
		return false
	}
	_, why := refusal(h.apiVersion, h.kind, true)
	return !wanted(h.apiVersion, h.kind) && why == ""
}

// wanted says whether Read decodes an object of this apiVersion and kind.
func wanted(apiVersion, kind string) bool {
	switch kind {
	case kustomizationKind:
		return groupOf(apiVersion) == fluxGroup || isV1alpha1(apiVersion)
	case configMapKind, secretKind:
		return apiVersion == "v1"
	}
	return sourceKind(apiVersion, kind)
}

// refusal says why a document that is not wanted is refused rather than
// skipped, and which of its fields is at fault; "" when it is let be. A
// Kustomization of an API group this tool does not read, or another kind
// in Flux's group, is almost always a typo, and skipping it would drop its
// unit from the configuration (which an apply would then garbage-collect).
// hasSpec says the document has a top-level spec, which kustomize's own
// kustomization.yaml never has.
func refusal(apiVersion, kind string, hasSpec bool) (field, why string) {
	group := groupOf(apiVersion)
	switch {
	case group == legacyGroup:
		return "apiVersion", fmt.Sprintf("%q is not read: %s is the Kustomization API of Flux's prototype, before %s, whose only version is %s/v1alpha1; "+
			"write that, or %s/v1", apiVersion, legacyGroup, fluxGroup, legacyGroup, fluxGroup)
	case group == fluxGroup && kind != kustomizationKind:
		return "kind", fmt.Sprintf("%q is not a kind of %s, whose only kind is %s", kind, fluxGroup, kustomizationKind)
	case !strings.EqualFold(kind, kustomizationKind) || group == kustomizeGroup:
		return "", ""
	case apiVersion == "" && !hasSpec:
		return "", "" // kustomize's kustomization.yaml, which may leave apiVersion out
	case apiVersion == "":
		return "apiVersion", fmt.Sprintf("required: a Flux Kustomization is %s/v1 (or v1beta2, v1beta1)", fluxGroup)
	}
	return "apiVersion", fmt.Sprintf("%q is not an API kustomize-deploy reads: a Flux Kustomization is %s/v1 (or v1beta2, v1beta1), kustomize's own kustomization is %s",
		apiVersion, fluxGroup, kustomizeGroup)
}

// groupOf is the API group of apiVersion: "" for the core group ("v1").
func groupOf(apiVersion string) string {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return group
}
