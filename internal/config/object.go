package config

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"sync"

	yaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// nodeOf is v, a value of an object as a build emits it (maps, lists,
// strings, numbers, booleans, null), as the YAML node the reader decodes
// its files into: tags say what each scalar is, keys are sorted, no line
// is known (emitted objects' problems are reported at the object's line).
func nodeOf(v any) *yaml.Node {
	switch t := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, nodeOf(t[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range t {
			n.Content = append(n.Content, nodeOf(e))
		}
		return n
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}
	case int64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(t, 10)}
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(t)}
	case float64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(t, 'g', -1, 64)}
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	default:
		// Not in an unstructured object; kept as text.
		data, _ := json.Marshal(t)
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(data)}
	}
}

// objectText is an emitted object's text, made (as JSON, which reads as
// YAML) only for what keeps it as written: a Kustomization's document,
// a notification.
type objectText struct {
	object map[string]any
	once   sync.Once
	text   []byte
}

func (o *objectText) whole() []byte {
	o.once.Do(func() { o.text, _ = json.Marshal(o.object) })
	return o.text
}

func (o *objectText) body() []byte { return o.whole() }
