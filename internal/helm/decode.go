package helm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fluxcd/pkg/ssa/utils"
	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

// splitManifests is Helm's releaseutil.SplitManifests, in order: a
// template's text split at each line that starts with "---" (the dashes
// and the spaces or tabs after them dropped), blank documents skipped,
// each document's leading whitespace trimmed. It finds the separators
// without Helm's regular expression, which cost as much as reading the
// documents' kinds.
func splitManifests(text string) []string {
	text = strings.TrimLeftFunc(text, unicode.IsSpace)
	var docs []string
	add := func(d string) {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, strings.TrimLeftFunc(d, unicode.IsSpace))
		}
	}
	start, from := 0, 0
	for {
		at := separatorAt(text, from)
		if at < 0 {
			add(text[start:])
			return docs
		}
		add(text[start:at])
		end := at + len("---")
		for end < len(text) && (text[end] == ' ' || text[end] == '\t') {
			end++
		}
		start, from = end, end
	}
}

// separatorAt is where the first "---" at the start of a line of text,
// at or after from, begins; -1 when there is none.
func separatorAt(text string, from int) int {
	for from <= len(text) {
		i := strings.Index(text[from:], "---")
		if i < 0 {
			return -1
		}
		at := from + i
		if at == 0 || text[at-1] == '\n' {
			return at
		}
		from = at + 1
	}
	return -1
}

// readObjects is utils.ReadObjects (a YAML stream's Kubernetes objects,
// Lists expanded, other documents left out) reading each document with
// decodeDocument where it can. A stream Kubernetes' decoder would read
// as JSON, or one its line reader refuses, is read by utils.ReadObjects
// itself, and so is any stream where a document fails.
func readObjects(data []byte) ([]*unstructured.Unstructured, error) {
	if bytes.HasPrefix(bytes.TrimLeftFunc(data, unicode.IsSpace), []byte("{")) {
		return utils.ReadObjects(bytes.NewReader(data))
	}
	reader := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	objs := []*unstructured.Unstructured{}
	for {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return utils.ReadObjects(bytes.NewReader(data))
		}
		if _, read, ok := decodeDocument(string(chunk)); ok {
			objs = append(objs, read...)
			continue
		}
		// As the decoder reads one document of a YAML stream.
		obj := &unstructured.Unstructured{}
		if err := k8syaml.NewYAMLToJSONDecoder(bytes.NewReader(chunk)).Decode(obj); err != nil {
			return utils.ReadObjects(bytes.NewReader(data))
		}
		if obj.IsList() {
			if err := obj.EachListItem(func(item k8sruntime.Object) error {
				objs = append(objs, item.(*unstructured.Unstructured))
				return nil
			}); err != nil {
				return utils.ReadObjects(bytes.NewReader(data))
			}
			continue
		}
		if utils.IsKubernetesObject(obj) && !utils.IsKustomization(obj) {
			objs = append(objs, obj)
		}
	}
}

// decodeDocument reads a rendered document straight from its YAML into
// the objects readDocumentViaJSON makes of it, without the trip through
// JSON that costs a third of a chart's rendering: the YAML is read by the
// same parser (yaml.v2, YAML 1.1's types: yes is true, 0777 is octal),
// and each value is typed as the JSON round trip types it: integers as
// int64, a float that JSON writes as an integer (1.0, 1e3) as int64 too,
// other floats as float64, keys as strings, strings not valid UTF-8
// mended as JSON mends them.
//
// ok is false for what it does not read the same way: a document JSON's
// decoder would try first (it starts with "{"), one holding a document
// separator or a carriage return (the decoder's line reader reads them
// its own way), one that is not a mapping with a kind (its error is the
// decoder's), values JSON cannot hold (NaN, infinities, keys of other
// types). The caller then reads the document as before.
func decodeDocument(body string) (head *unstructured.Unstructured, objs []*unstructured.Unstructured, ok bool) {
	trimmed := strings.TrimLeftFunc(body, unicode.IsSpace)
	if strings.HasPrefix(trimmed, "{") || strings.HasPrefix(body, "---") || strings.Contains(body, "\n---") || strings.ContainsRune(body, '\r') {
		return nil, nil, false
	}
	// The decoder's line reader ends every line, the last one too, with a
	// line break; a block scalar at the document's end keeps it.
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	var doc any
	if err := yamlv2.Unmarshal([]byte(body), &doc); err != nil {
		return nil, nil, false
	}
	m, isMap := doc.(map[any]any)
	if !isMap {
		return nil, nil, false
	}
	obj, ok := jsonMap(m, 0)
	if !ok {
		return nil, nil, false
	}
	head = &unstructured.Unstructured{Object: obj}
	if head.GetKind() == "" {
		return nil, nil, false
	}
	if head.IsList() {
		for _, item := range obj["items"].([]any) {
			child, isMap := item.(map[string]any)
			if !isMap {
				return nil, nil, false
			}
			objs = append(objs, &unstructured.Unstructured{Object: child})
		}
		return head, objs, true
	}
	if utils.IsKubernetesObject(head) && !utils.IsKustomization(head) {
		objs = append(objs, head)
	}
	return head, objs, true
}

// maxDepth is how deep decodeDocument reads; deeper documents are read
// as before, and refused there at JSON's own limit.
const maxDepth = 1000

// jsonMap is m as JSON would hold it (see decodeDocument).
func jsonMap(m map[any]any, depth int) (map[string]any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		key, ok := jsonKey(k)
		if !ok {
			return nil, false
		}
		if _, dup := out[key]; dup {
			return nil, false // keys alike once written (1 and "1"): JSON keeps either
		}
		if out[key], ok = jsonValue(v, depth+1); !ok {
			return nil, false
		}
	}
	return out, true
}

// jsonKey is a YAML key as sigs.k8s.io/yaml writes it into JSON.
func jsonKey(k any) (string, bool) {
	switch k := k.(type) {
	case string:
		return jsonString(k), true
	case int:
		return strconv.Itoa(k), true
	case int64:
		return strconv.FormatInt(k, 10), true
	case bool:
		return strconv.FormatBool(k), true
	case float64:
		if math.IsInf(k, 0) || math.IsNaN(k) {
			return "", false
		}
		return strconv.FormatFloat(k, 'g', -1, 32), true
	}
	return "", false
}

func jsonValue(v any, depth int) (any, bool) {
	switch v := v.(type) {
	case nil, bool:
		return v, true
	case string:
		return jsonString(v), true
	case int:
		return int64(v), true
	case int64:
		return v, true
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), true
		}
		return float64(v), true // JSON's reader takes what int64 cannot hold as a float
	case float64:
		return jsonFloat(v)
	case []any:
		if depth > maxDepth {
			return nil, false
		}
		out := make([]any, len(v))
		for i, e := range v {
			var ok bool
			if out[i], ok = jsonValue(e, depth+1); !ok {
				return nil, false
			}
		}
		return out, true
	case map[any]any:
		return jsonMap(v, depth)
	}
	return nil, false
}

// jsonFloat is f once written as JSON and read back: encoding/json writes
// a float that is an integer below 1e21 without a fraction or exponent,
// and Kubernetes' reader takes a number it can parse as an int64 as one.
func jsonFloat(f float64) (any, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false // JSON has no such numbers: the decoder's error
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		if i, err := strconv.ParseInt(strconv.FormatFloat(f, 'f', -1, 64), 10, 64); err == nil {
			return i, true
		}
	}
	return f, true
}

// jsonString is s as encoding/json writes it: each byte that is not part
// of valid UTF-8 replaced by U+FFFD.
func jsonString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
