package helmtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// make bench's Helm charts (cmd/bench), generated into the
// bench's work directory and served from a chart repository on
// 127.0.0.1; tests render them too (the render path's equivalence with
// helm's and its Go benchmark). Their templates use what real charts use
// (helpers through include, toYaml, checksums, range loops), so rendering
// costs what it costs for a real chart.
const (
	// BenchChartBig renders BenchBigCount each of Deployments, Services
	// and ConfigMaps from a range loop over its values.
	BenchChartBig = "big"
	// BenchChartIngress, BenchChartCerts and BenchChartApp are the example
	// layout's charts, shaped like flux2-kustomize-helm-example's
	// ingress-nginx, cert-manager (a CRD in crds/, a resource of it, a
	// post-install hook Job) and podinfo.
	BenchChartIngress = "ingress"
	BenchChartCerts   = "certs"
	BenchChartApp     = "app"
	// BenchChartVersion is every chart's version.
	BenchChartVersion = "1.0.0"
	// BenchCertsCRD is the name of the certs chart's CRD.
	BenchCertsCRD = "issuers.certs.bench.example"
)

// BenchBigCount is how many of each kind the big chart renders.
const BenchBigCount = 100

// BenchCharts are the bench's chart directories by chart name, each a map
// of file paths to contents.
func BenchCharts() map[string]map[string]string {
	return map[string]map[string]string{
		BenchChartBig:     bigChart(),
		BenchChartIngress: ingressChart(),
		BenchChartCerts:   certsChart(),
		BenchChartApp:     appChart(),
	}
}

// WriteBenchCharts writes every bench chart into dir/<name>.
func WriteBenchCharts(dir string) error {
	for name, files := range BenchCharts() {
		for path, body := range files {
			p := filepath.Join(dir, name, path)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

func chartYAML(name, description string) string {
	return fmt.Sprintf("apiVersion: v2\nname: %s\ndescription: %q\ntype: application\nversion: %s\nappVersion: \"1.0\"\n", name, description, BenchChartVersion)
}

// commonHelpers are the labels and names every chart's helpers define,
// as `helm create` lays them out; NAME is replaced by the chart's name.
const commonHelpers = `{{- define "NAME.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "NAME.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "NAME.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "NAME.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
`

func helpers(name string) string { return strings.ReplaceAll(commonHelpers, "NAME", name) }

func bigChart() map[string]string {
	return map[string]string{
		"Chart.yaml": chartYAML(BenchChartBig, "Many Deployments, Services and ConfigMaps from a range over values."),
		"values.yaml": fmt.Sprintf(`count: %d
image:
  repository: registry.example/bench/web
  tag: "1.0.0"
resources:
  requests: {cpu: 10m, memory: 16Mi}
  limits: {memory: 64Mi}
settings:
  log.level: info
  pool.size: "8"
  feature.flags: "a,b,c"
`, BenchBigCount),
		"templates/_helpers.tpl": helpers(BenchChartBig) + `
{{- define "big.name" -}}
{{ printf "%s-%05d" (include "big.fullname" .root) .i }}
{{- end }}

{{- define "big.componentLabels" -}}
{{ include "big.labels" .root }}
app.kubernetes.io/component: {{ include "big.name" . }}
{{- end }}

{{- define "big.settings" -}}
{{- range $k, $v := .root.Values.settings }}
{{ $k }}={{ $v }}
{{- end }}
index={{ .i }}
{{- end }}
`,
		"templates/deployments.yaml": `{{- range $i := until (int .Values.count) }}
{{- $ctx := dict "root" $ "i" $i }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "big.name" $ctx }}
  labels:
    {{- include "big.componentLabels" $ctx | nindent 4 }}
spec:
  replicas: 1
  selector:
    matchLabels:
      {{- include "big.selectorLabels" $ | nindent 6 }}
      app.kubernetes.io/component: {{ include "big.name" $ctx }}
  template:
    metadata:
      labels:
        {{- include "big.componentLabels" $ctx | nindent 8 }}
      annotations:
        checksum/config: {{ include "big.settings" $ctx | sha256sum }}
    spec:
      containers:
      - name: web
        image: "{{ $.Values.image.repository }}:{{ $.Values.image.tag }}"
        ports:
        - name: http
          containerPort: 8080
        envFrom:
        - configMapRef:
            name: {{ include "big.name" $ctx }}
        resources:
          {{- toYaml $.Values.resources | nindent 10 }}
{{- end }}
`,
		"templates/services.yaml": `{{- range $i := until (int .Values.count) }}
{{- $ctx := dict "root" $ "i" $i }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "big.name" $ctx }}
  labels:
    {{- include "big.componentLabels" $ctx | nindent 4 }}
spec:
  selector:
    {{- include "big.selectorLabels" $ | nindent 4 }}
    app.kubernetes.io/component: {{ include "big.name" $ctx }}
  ports:
  - name: http
    port: 80
    targetPort: http
{{- end }}
`,
		"templates/configmaps.yaml": `{{- range $i := until (int .Values.count) }}
{{- $ctx := dict "root" $ "i" $i }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "big.name" $ctx }}
  labels:
    {{- include "big.componentLabels" $ctx | nindent 4 }}
data:
  settings.properties: |
    {{- include "big.settings" $ctx | nindent 4 }}
  {{- range $k, $v := $.Values.settings }}
  {{ $k | replace "." "_" | upper }}: {{ $v | quote }}
  {{- end }}
{{- end }}
`,
	}
}

// deployment is a Deployment template of one container for chart name,
// named by its fullname helper plus suffix.
func deployment(name, suffix string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "%[1]s.fullname" . }}%[2]s
  labels:
    {{- include "%[1]s.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicaCount }}
  selector:
    matchLabels:
      {{- include "%[1]s.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "%[1]s.selectorLabels" . | nindent 8 }}
      annotations:
        checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
    spec:
      serviceAccountName: {{ include "%[1]s.fullname" . }}
      containers:
      - name: %[1]s
        image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
        args:
        {{- toYaml .Values.args | nindent 8 }}
        ports:
        - name: http
          containerPort: 8080
        resources:
          {{- toYaml .Values.resources | nindent 10 }}
`, name, suffix)
}

func service(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: {{ include "%[1]s.fullname" . }}
  labels:
    {{- include "%[1]s.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "%[1]s.selectorLabels" . | nindent 4 }}
  ports:
  - name: http
    port: 80
    targetPort: http
`, name)
}

func serviceAccount(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "%[1]s.fullname" . }}
  labels:
    {{- include "%[1]s.labels" . | nindent 4 }}
`, name)
}

func configMap(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "%[1]s.fullname" . }}
  labels:
    {{- include "%[1]s.labels" . | nindent 4 }}
data:
  {{- range $k, $v := .Values.config }}
  {{ $k }}: {{ $v | quote }}
  {{- end }}
`, name)
}

func commonValues(image string) string {
	return fmt.Sprintf(`replicaCount: 1
image:
  repository: %s
  tag: "1.0.0"
args: ["--port=8080"]
resources:
  requests: {cpu: 10m, memory: 16Mi}
config:
  log-level: info
`, image)
}

func ingressChart() map[string]string {
	return map[string]string{
		"Chart.yaml":                chartYAML(BenchChartIngress, "An ingress controller, shaped like ingress-nginx."),
		"values.yaml":               commonValues("registry.example/bench/ingress-controller"),
		"templates/_helpers.tpl":    helpers(BenchChartIngress),
		"templates/sa.yaml":         serviceAccount(BenchChartIngress),
		"templates/configmap.yaml":  configMap(BenchChartIngress),
		"templates/deployment.yaml": deployment(BenchChartIngress, "-controller"),
		"templates/service.yaml":    service(BenchChartIngress),
		"templates/rbac.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "ingress.fullname" . }}
  labels:
    {{- include "ingress.labels" . | nindent 4 }}
rules:
- apiGroups: [""]
  resources: [configmaps, endpoints, pods, secrets, services]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [ingresses]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "ingress.fullname" . }}
  labels:
    {{- include "ingress.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "ingress.fullname" . }}
subjects:
- kind: ServiceAccount
  name: {{ include "ingress.fullname" . }}
  namespace: {{ .Release.Namespace }}
`,
	}
}

func certsChart() map[string]string {
	return map[string]string{
		"Chart.yaml":                chartYAML(BenchChartCerts, "A certificate controller with a CRD and a post-install hook, shaped like cert-manager."),
		"values.yaml":               commonValues("registry.example/bench/certs-controller") + "issuer:\n  name: default\n  email: ops@example.com\n",
		"templates/_helpers.tpl":    helpers(BenchChartCerts),
		"templates/sa.yaml":         serviceAccount(BenchChartCerts),
		"templates/configmap.yaml":  configMap(BenchChartCerts),
		"templates/deployment.yaml": deployment(BenchChartCerts, ""),
		"templates/service.yaml":    service(BenchChartCerts),
		"crds/issuers.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ` + BenchCertsCRD + `
spec:
  group: certs.bench.example
  names: {kind: Issuer, listKind: IssuerList, plural: issuers, singular: issuer}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              email: {type: string}
              server: {type: string}
`,
		"templates/issuer.yaml": `apiVersion: certs.bench.example/v1
kind: Issuer
metadata:
  name: {{ .Values.issuer.name }}
  labels:
    {{- include "certs.labels" . | nindent 4 }}
spec:
  email: {{ .Values.issuer.email }}
  server: https://acme.example/directory
`,
		// cert-manager's startupapicheck: a Job run after the install.
		"templates/startupapicheck.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ include "certs.fullname" . }}-startupapicheck
  labels:
    {{- include "certs.labels" . | nindent 4 }}
  annotations:
    helm.sh/hook: post-install
    helm.sh/hook-weight: "1"
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: OnFailure
      containers:
      - name: check
        image: "{{ .Values.image.repository }}-ctl:{{ .Values.image.tag }}"
        args: [check, api, --wait=1m]
`,
	}
}

func appChart() map[string]string {
	return map[string]string{
		"Chart.yaml":                chartYAML(BenchChartApp, "A web application, shaped like podinfo."),
		"values.yaml":               commonValues("registry.example/bench/app") + "secret:\n  token: not-a-real-token\n",
		"templates/_helpers.tpl":    helpers(BenchChartApp),
		"templates/sa.yaml":         serviceAccount(BenchChartApp),
		"templates/configmap.yaml":  configMap(BenchChartApp),
		"templates/deployment.yaml": deployment(BenchChartApp, ""),
		"templates/service.yaml":    service(BenchChartApp),
		"templates/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: {{ include "app.fullname" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
type: Opaque
data:
  token: {{ .Values.secret.token | b64enc }}
`,
	}
}
