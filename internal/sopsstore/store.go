// Package sopsstore picks sops's store (parser and emitter) for a format.
// It is shared by decryption and by the test encryption helpers.
package sopsstore

import (
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/stores/dotenv"
	"github.com/getsops/sops/v3/stores/ini"
	"github.com/getsops/sops/v3/stores/json"
	"github.com/getsops/sops/v3/stores/yaml"
)

// For returns the store of format f with sops's default settings; any
// format it does not know is sops's binary format.
func For(f formats.Format) sops.Store {
	c := config.NewStoresConfig()
	switch f {
	case formats.Yaml:
		return yaml.NewStore(&c.YAML)
	case formats.Json:
		return json.NewStore(&c.JSON)
	case formats.Dotenv:
		return dotenv.NewStore(&c.Dotenv)
	case formats.Ini:
		return ini.NewStore(&c.INI)
	default:
		return json.NewBinaryStore(&c.JSONBinary)
	}
}
