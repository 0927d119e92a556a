package testcluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// FailReadinessLabel makes a pod fail its readiness: kwok moves a pod with
// this label set to FailReadinessValue to Running, but its Ready condition
// stays False with FailReadinessMessage, as if its readiness probe failed.
const (
	FailReadinessLabel   = "testcluster.kustomize-deploy.dev/readiness"
	FailReadinessValue   = "fail"
	FailReadinessMessage = "readiness probe failed (injected by testcluster)"
)

// CrashLabel makes a pod's containers crash: kwok moves a pod with this
// label to a container that exited with the label's value as its exit
// code (e.g. "1") and reason Error: a pod that restarts (restartPolicy
// Always or OnFailure) is Running and waits in CrashLoopBackOff after
// CrashRestarts restarts, one that does not (Never) has Failed. Each
// crash records a Warning event BackOff, as the kubelet does.
const (
	CrashLabel    = "testcluster.kustomize-deploy.dev/crash"
	CrashRestarts = 3
)

// fakeNodeAnnotation selects the nodes kwok manages.
const fakeNodeAnnotation = "kwok.x-k8s.io/node"

// upstreamStages are kwok's own stage files (from its module's
// kustomize/stage/ directory) the cluster runs: nodes initialize and keep
// heartbeating, pods go straight to Ready, Job pods complete, deleted pods go.
var upstreamStages = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/node/heartbeat/node-heartbeat.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// kwokUpstreamStages copies the stage files out of the kwok module that
// hack/tools/kwok pins, as one multi-document YAML stream.
func kwokUpstreamStages(ctx context.Context, toolsDir string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, goBinary(), "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kwok")
	cmd.Dir = toolsDir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("locating the kwok module from %s: %w", toolsDir, err)
	}
	modDir := strings.TrimSpace(string(out))
	var buf bytes.Buffer
	for _, f := range upstreamStages {
		data, err := os.ReadFile(filepath.Join(modDir, f))
		if err != nil {
			return nil, fmt.Errorf("reading kwok stage: %w", err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	return buf.Bytes(), nil
}

// kwokConfig turns kwok's upstream stages into the configuration this cluster
// runs: heartbeats come often enough that the node lifecycle controller never
// sees a node go silent, pods labelled FailReadinessLabel or CrashLabel skip
// pod-ready and pod-complete, and stages of our own run the first without
// ever making them Ready and crash the others.
func kwokConfig(upstream []byte) ([]byte, error) {
	var out bytes.Buffer
	for _, doc := range bytes.Split(upstream, []byte("\n---\n")) {
		doc = bytes.TrimPrefix(bytes.TrimSpace(doc), []byte("---"))
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var stage map[string]any
		if err := yaml.Unmarshal(doc, &stage); err != nil {
			return nil, fmt.Errorf("parsing kwok stage: %w", err)
		}
		meta, _ := stage["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		spec, _ := stage["spec"].(map[string]any)
		switch name {
		case "node-heartbeat":
			spec["delay"] = map[string]any{"durationMilliseconds": 5000, "jitterDurationMilliseconds": 5000}
		case "pod-ready", "pod-complete":
			sel, _ := spec["selector"].(map[string]any)
			exprs, _ := sel["matchExpressions"].([]any)
			for _, label := range []string{FailReadinessLabel, CrashLabel} {
				exprs = append(exprs, map[string]any{
					"key":      fmt.Sprintf(".metadata.labels[%q]", label),
					"operator": "DoesNotExist",
				})
			}
			sel["matchExpressions"] = exprs
		}
		data, err := yaml.Marshal(stage)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	out.WriteString("---\n")
	out.WriteString(failReadinessStage)
	out.WriteString("---\n")
	out.WriteString(crashStage)
	return out.Bytes(), nil
}

var failReadinessStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-fail-readiness
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchLabels:
      ` + FailReadinessLabel + `: ` + FailReadinessValue + `
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Pending'
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: Ready
        reason: ContainersNotReady
        message: "` + FailReadinessMessage + `"
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: ContainersReady
        reason: ContainersNotReady
        message: "` + FailReadinessMessage + `"
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        started: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
      {{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      {{ with $podIPs }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
`

var crashStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-crash
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.metadata.labels["` + CrashLabel + `"]'
      operator: 'Exists'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Pending'
  next:
    event:
      type: Warning
      reason: BackOff
      message: Back-off restarting failed container
    statusTemplate: |
      {{ $now := Now }}
      {{ $code := index .metadata.labels "` + CrashLabel + `" }}
      {{ $restarts := ne .spec.restartPolicy "Never" }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: Ready
        reason: ContainersNotReady
        message: "containers with unready status: [{{ range $i, $c := .spec.containers }}{{ if $i }} {{ end }}{{ $c.name }}{{ end }}]"
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: ContainersReady
        reason: ContainersNotReady
      containerStatuses:
      {{ $pod := .metadata.name }}
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        started: false
        {{ if $restarts }}
        restartCount: ` + fmt.Sprint(CrashRestarts) + `
        state:
          waiting:
            reason: CrashLoopBackOff
            message: {{ printf "back-off 40s restarting failed container=%s pod=%s" .name $pod | Quote }}
        lastState:
          terminated:
            exitCode: {{ $code }}
            reason: Error
            startedAt: {{ $now | Quote }}
            finishedAt: {{ $now | Quote }}
        {{ else }}
        restartCount: 0
        state:
          terminated:
            exitCode: {{ $code }}
            reason: Error
            startedAt: {{ $now | Quote }}
            finishedAt: {{ $now | Quote }}
        {{ end }}
      {{ end }}
      {{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      {{ with $podIPs }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      phase: {{ if $restarts }}Running{{ else }}Failed{{ end }}
      startTime: {{ $now | Quote }}
`
