package testcluster

import "testing"

func TestRequiredVersion(t *testing.T) {
	gomod := []byte(`module example.com/tools

go 1.26.0

require carvel.dev/kapp v0.64.2

require (
	k8s.io/kubernetes v1.37.2
	k8s.io/kubectl v0.37.2 // indirect
)

replace k8s.io/kubectl => k8s.io/kubectl v0.37.2
`)
	for pkg, want := range map[string]string{
		"carvel.dev/kapp/cmd/kapp":      "v0.64.2",
		"k8s.io/kubernetes/cmd/kubectl": "v1.37.2",
		"k8s.io/kubectl":                "v0.37.2",
		"k8s.io/kubernetes-other/cmd/x": "",
		"example.com/missing":           "",
	} {
		if got := requiredVersion(gomod, pkg); got != want {
			t.Errorf("requiredVersion(%q) = %q, want %q", pkg, got, want)
		}
	}
}
