package testcluster

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const upstreamFixture = `---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-heartbeat
spec:
  delay:
    durationMilliseconds: 20000
    jitterDurationMilliseconds: 25000
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  selector:
    matchExpressions:
    - key: '.status.phase'
      operator: 'In'
      values: ['Pending']
`

func TestKwokConfig(t *testing.T) {
	out, err := kwokConfig([]byte(upstreamFixture))
	if err != nil {
		t.Fatal(err)
	}
	stages := map[string]map[string]any{}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var s map[string]any
		if err := yaml.Unmarshal([]byte(strings.TrimPrefix(doc, "---\n")), &s); err != nil {
			t.Fatalf("output is not YAML: %v\n%s", err, doc)
		}
		if s == nil {
			continue
		}
		stages[s["metadata"].(map[string]any)["name"].(string)] = s["spec"].(map[string]any)
	}
	if len(stages) != 4 {
		t.Fatalf("want node-heartbeat, pod-ready, pod-fail-readiness and pod-crash, got %v", stages)
	}
	delay := stages["node-heartbeat"]["delay"].(map[string]any)
	if got := delay["durationMilliseconds"].(float64) + delay["jitterDurationMilliseconds"].(float64); got >= 40000 {
		t.Errorf("heartbeat may wait %vms, longer than the node monitor grace period", got)
	}
	exprs := stages["pod-ready"]["selector"].(map[string]any)["matchExpressions"].([]any)
	for i, label := range []string{FailReadinessLabel, CrashLabel} {
		e := exprs[len(exprs)-2+i].(map[string]any)
		if !strings.Contains(e["key"].(string), label) || e["operator"] != "DoesNotExist" {
			t.Errorf("pod-ready does not exclude pods labelled %s: %v", label, exprs)
		}
	}
	if crash := stages["pod-crash"]["next"].(map[string]any)["event"].(map[string]any); crash["reason"] != "BackOff" {
		t.Errorf("pod-crash records %v, want a BackOff event", crash)
	}
	labels := stages["pod-fail-readiness"]["selector"].(map[string]any)["matchLabels"].(map[string]any)
	if labels[FailReadinessLabel] != FailReadinessValue {
		t.Errorf("pod-fail-readiness selects %v", labels)
	}
}
