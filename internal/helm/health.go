package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// HealthCheckExpr is one of a HelmRelease's spec.healthCheckExprs (as a
// Kustomization's): CEL expressions judging the health of a kind.
type HealthCheckExpr struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Current    string `json:"current"`
	InProgress string `json:"inProgress"`
	Failed     string `json:"failed"`
}

// readHealthCheckExprs reads spec.healthCheckExprs, checking each entry
// names a kind and has a current expression (the expressions themselves
// are parsed by the waiter).
func readHealthCheckExprs(raw json.RawMessage) ([]HealthCheckExpr, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var out []HealthCheckExpr
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("spec.healthCheckExprs: %s", unknownField(err))
	}
	for i, e := range out {
		for _, f := range []struct{ name, v string }{{"apiVersion", e.APIVersion}, {"kind", e.Kind}, {"current", e.Current}} {
			if f.v == "" {
				return nil, fmt.Errorf("spec.healthCheckExprs[%d].%s: required", i, f.name)
			}
		}
	}
	return out, nil
}
