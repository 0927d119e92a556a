package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// suiteLabel marks every object of a suite; kubectl prunes by it.
const suiteLabel = "bench.kustomize-deploy.dev/suite"

// workload is the set of manifests one tool deploys at one size: a
// Namespace, and in it 1% each of Deployments, Services and Secrets (at
// least one of each, so staging and health waits are exercised) and
// ConfigMaps for the rest. Every object is its own file, as in a GitOps
// repository.
type workload struct {
	Suite     string // names the Namespace, the kapp app and our unit
	N         int    // objects in total, the Namespace included
	Workloads int    // Deployments, and as many Services and Secrets
	// ConfigMaps counts the ConfigMaps still in the manifests; Prune
	// lowers it.
	ConfigMaps int
	// gen holds each ConfigMap's and Deployment's revision; Change bumps it.
	cmGen, depGen []int
}

func newWorkload(suite string, n int) *workload {
	k := max(1, n/100)
	w := &workload{Suite: suite, N: n, Workloads: k, ConfigMaps: n - 1 - 3*k}
	w.cmGen = make([]int, w.ConfigMaps)
	w.depGen = make([]int, k)
	return w
}

// Size is the number of objects in the manifests now.
func (w *workload) Size() int { return 1 + 3*w.Workloads + w.ConfigMaps }

// ChangeOne changes one ConfigMap's data.
func (w *workload) ChangeOne() { w.cmGen[0]++ }

// ChangeTenth changes a tenth of the objects: every Deployment's pod
// template (a rollout to wait for) and ConfigMaps for the rest.
func (w *workload) ChangeTenth() int {
	n := w.Size() / 10
	changed := 0
	for i := range w.depGen {
		if changed == n {
			break
		}
		w.depGen[i]++
		changed++
	}
	for i := 0; changed < n && i < w.ConfigMaps; i++ {
		w.cmGen[i]++
		changed++
	}
	return changed
}

// PruneTenth removes a tenth of the objects (ConfigMaps) from the manifests.
func (w *workload) PruneTenth() int {
	n := min(w.Size()/10, w.ConfigMaps)
	w.ConfigMaps -= n
	return n
}

// Write replaces dir's contents with the manifests.
func (w *workload) Write(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return w.WriteInto(dir, "")
}

// WriteInto adds the manifests to dir, each file's name prefixed with
// prefix, so that several workloads can share one directory.
func (w *workload) WriteInto(dir, prefix string) error {
	for name, body := range w.files() {
		if err := os.WriteFile(filepath.Join(dir, prefix+name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// files are the manifests by file name, one object each.
func (w *workload) files() map[string]string {
	files := map[string]string{"namespace.yaml": w.namespace()}
	for i := range w.Workloads {
		files[fmt.Sprintf("deployment-%05d.yaml", i)] = w.deployment(i)
		files[fmt.Sprintf("service-%05d.yaml", i)] = w.service(i)
		files[fmt.Sprintf("secret-%05d.yaml", i)] = w.secret(i)
	}
	for i := range w.ConfigMaps {
		files[fmt.Sprintf("configmap-%05d.yaml", i)] = w.configMap(i)
	}
	return files
}

func (w *workload) meta(name string) string {
	return fmt.Sprintf("metadata:\n  name: %s\n  namespace: %s\n  labels:\n    %s: %s\n", name, w.Suite, suiteLabel, w.Suite)
}

func (w *workload) namespace() string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n    %s: %s\n", w.Suite, suiteLabel, w.Suite)
}

func (w *workload) configMap(i int) string {
	return "apiVersion: v1\nkind: ConfigMap\n" + w.meta(fmt.Sprintf("config-%05d", i)) +
		fmt.Sprintf("data:\n  index: %q\n  revision: %q\n  settings.properties: |\n    log.level=info\n    feature.%d=enabled\n    pool.size=%d\n",
			fmt.Sprint(i), fmt.Sprint(w.cmGen[i]), i, 4+i%8)
}

func (w *workload) secret(i int) string {
	return "apiVersion: v1\nkind: Secret\n" + w.meta(fmt.Sprintf("secret-%05d", i)) +
		fmt.Sprintf("type: Opaque\ndata:\n  password: %s\n", base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("s3cr3t-%d", i))))
}

func (w *workload) service(i int) string {
	name := fmt.Sprintf("web-%05d", i)
	return "apiVersion: v1\nkind: Service\n" + w.meta(name) +
		fmt.Sprintf("spec:\n  selector:\n    app: %s\n  ports:\n  - port: 80\n    targetPort: 8080\n", name)
}

func (w *workload) deployment(i int) string {
	name := fmt.Sprintf("web-%05d", i)
	var b strings.Builder
	b.WriteString("apiVersion: apps/v1\nkind: Deployment\n" + w.meta(name))
	fmt.Fprintf(&b, `spec:
  replicas: 1
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
      annotations:
        bench.kustomize-deploy.dev/revision: "%[2]d"
    spec:
      containers:
      - name: web
        image: registry.example/bench/web:1.0.0
        ports:
        - containerPort: 8080
`, name, w.depGen[i])
	return b.String()
}
