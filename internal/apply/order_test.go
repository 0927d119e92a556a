package apply

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSendOrder(t *testing.T) {
	cm := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "a"}}}
	}
	secret := func(name string) *unstructured.Unstructured {
		u := cm(name)
		u.SetKind("Secret")
		return u
	}
	deploy := func(name string, volumes ...string) *unstructured.Unstructured {
		var vs []any
		for _, v := range volumes {
			vs = append(vs, map[string]any{"name": "v", "configMap": map[string]any{"name": v}})
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name, "namespace": "a"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"volumes": vs}}}}}
	}
	kind := func(apiVersion, kind, name string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": "a"}, "spec": spec}}
	}
	cases := []struct {
		name string
		objs []*unstructured.Unstructured
		want string
	}{
		{"no workload: plan order", []*unstructured.Unstructured{cm("a"), cm("b"), kind("v1", "Service", "s", nil)}, "ConfigMap/a ConfigMap/b Service/s"},
		{"unnamed ConfigMaps go after the Deployment", []*unstructured.Unstructured{cm("a"), cm("b"), kind("v1", "Service", "s", nil), deploy("web")},
			"Service/s Deployment/web ConfigMap/a ConfigMap/b"},
		{"what a pod template names keeps its place", []*unstructured.Unstructured{cm("a"), cm("conf"), secret("s"), deploy("web", "conf")},
			"ConfigMap/conf Deployment/web ConfigMap/a Secret/s"},
		{"a Secret an Issuer names keeps its place", []*unstructured.Unstructured{secret("ca"), secret("other"), deploy("web"), kind("cert-manager.io/v1", "Issuer", "i", map[string]any{"ca": map[string]any{"secretName": "ca"}})},
			"Secret/ca Deployment/web Secret/other Issuer/i"},
		{"a ServiceAccount's pull secret keeps its place", []*unstructured.Unstructured{kind("v1", "ServiceAccount", "sa", nil), secret("pull"), deploy("web")},
			"ServiceAccount/sa Deployment/web Secret/pull"},
		{"after the last of several workloads", []*unstructured.Unstructured{cm("a"), deploy("one"), kind("apps/v1", "StatefulSet", "db", nil), kind("batch/v1", "Job", "migrate", nil)},
			"Deployment/one StatefulSet/db Job/migrate ConfigMap/a"},
		{"data after the last workload stays there", []*unstructured.Unstructured{cm("a"), deploy("web"), cm("z")},
			"Deployment/web ConfigMap/a ConfigMap/z"},
		{"a ConfigMap naming another does not keep it early", []*unstructured.Unstructured{cm("a"), withData(cm("b"), "a"), deploy("web")},
			"Deployment/web ConfigMap/a ConfigMap/b"},
		{"a name inside a container's argument keeps its place", []*unstructured.Unstructured{cm("a"), cm("settings"), withArgs(deploy("web"), "--config-map=settings", "ns/a")},
			"ConfigMap/a ConfigMap/settings Deployment/web"},
		{"a name that only starts a longer one does not", []*unstructured.Unstructured{cm("set"), withArgs(deploy("web"), "--config-map=settings")},
			"Deployment/web ConfigMap/set"},
		{"a CronJob is not a workload that rolls out", []*unstructured.Unstructured{cm("a"), kind("batch/v1", "CronJob", "c", nil)}, "ConfigMap/a CronJob/c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			steps := make([]Step, len(tc.objs))
			for i, u := range tc.objs {
				steps[i] = Step{Object: u}
			}
			order := sendOrder(steps)
			var got []string
			for _, i := range order {
				got = append(got, fmt.Sprintf("%s/%s", steps[i].Object.GetKind(), steps[i].Object.GetName()))
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("sent %s\nwant %s", strings.Join(got, " "), tc.want)
			}
			sorted := slices.Clone(order)
			slices.Sort(sorted)
			for i, v := range sorted {
				if i != v {
					t.Fatalf("order %v is not a permutation of the steps", order)
				}
			}
		})
	}
}

func withData(u *unstructured.Unstructured, value string) *unstructured.Unstructured {
	u.Object["data"] = map[string]any{"ref": value}
	return u
}

func withArgs(u *unstructured.Unstructured, args ...string) *unstructured.Unstructured {
	var as []any
	for _, a := range args {
		as = append(as, a)
	}
	spec := u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	spec["containers"] = []any{map[string]any{"name": "c", "args": as}}
	return u
}
