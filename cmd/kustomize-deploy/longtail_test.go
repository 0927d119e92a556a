package main

import (
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// An operator-managed fleet runs with no flag: the FluxInstance's
// spec.sync names the source its Kustomizations build from, and the
// objects of Flux's other controllers (image automation, a Receiver) and
// the FluxInstance itself are left out of the apply, one note per reason
// naming them, while the units' other objects are applied.
func TestConfigOperatorFleetLeavesOutFluxObjects(t *testing.T) {
	c := newCLI(t)
	repo := gitFixture(t, "operator-fleet", "NAMESPACE", c.ns)
	o, s := c.runConfig("apply", "--config", filepath.Join(repo, "clusters/local"))
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	apps, operator := got["apps"], got["flux-operator"]
	if apps == nil || operator == nil || len(s.Units) != 2 {
		t.Fatalf("units: %v", names(s))
	}
	notes := strings.Join(apps.Notes, "\n")
	contains(t, "apps' notes", notes,
		"ImageRepository/"+c.ns+"/podinfo, ImagePolicy/"+c.ns+"/podinfo, ImageUpdateAutomation/"+c.ns+"/fleet: Flux image automation: not applied",
		"$imagepolicy markers are left as they are",
		"Receiver/"+c.ns+"/github: a Flux notification Receiver: not applied: a webhook into the cluster has no meaning")
	contains(t, "flux-operator's notes", strings.Join(operator.Notes, "\n"),
		"FluxInstance/"+c.ns+"/flux: Flux Operator's FluxInstance: not applied")
	for _, r := range s.Units {
		for _, e := range r.Entries {
			if e.Object.Group != "" {
				t.Errorf("unit %s applied %s", r.Unit, e.Object)
			}
		}
	}
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "podinfo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := cm.Data["image"]; img != "ghcr.io/stefanprodan/podinfo:6.5.0" {
		t.Errorf("the image: %q", img)
	}
	if r := apps.Reason; r != result.ReasonApplySucceed {
		t.Errorf("apps: %s %s", r, apps.Message)
	}
}
