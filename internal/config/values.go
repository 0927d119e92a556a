package config

import (
	"encoding/base64"
	"maps"
)

// values reads a ConfigMap or Secret for postBuild.substituteFrom. Only
// what substitution uses is checked; the rest of the object is the API
// server's business. Problems name keys, never values.
func (d *decoder) values(top *fields, kind string, body []byte) *Values {
	d.object = kind
	v := &Values{Kind: kind}
	v.Ref = d.metadata(top)
	if top.has("sops") {
		// Encrypted values are ciphertext until the run decrypts them;
		// keep the document as written for that.
		v.Encrypted, v.Raw = true, body
		return v
	}
	data, lines := top.stringMap("data")
	if kind == configMapKind {
		v.Data = data
		if v.Data == nil {
			v.Data = map[string]string{}
		}
		return v
	}
	v.Data = map[string]string{}
	for _, k := range sortedKeys(data) {
		b, err := base64.StdEncoding.DecodeString(data[k])
		if err != nil {
			d.add(lines[k], keyed("data", k), "not valid base64")
			continue
		}
		v.Data[k] = string(b)
	}
	stringData, _ := top.stringMap("stringData")
	maps.Copy(v.Data, stringData) // the API server lays stringData over data
	return v
}
