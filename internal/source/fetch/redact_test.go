package fetch

import "testing"

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:tok@example.com/r.git":     "https://user:xxxxx@example.com/r.git",
		"https://tok@example.com/r.git":          "https://xxxxx@example.com/r.git",
		"ssh://git@example.com/r.git":            "ssh://git@example.com/r.git",
		"https://example.com/r.git":              "https://example.com/r.git",
		"oci://user:tok@registry.example/charts": "oci://user:xxxxx@registry.example/charts",
		"git@github.com:acme/fleet.git":          "git@github.com:acme/fleet.git",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
