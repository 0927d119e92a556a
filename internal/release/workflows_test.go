package release

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// workflows are every workflow file of the repository: CI, release and
// the examples users copy.
func workflows(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../../.github/workflows/*.yml", "../../examples/workflows/*.yml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 9 {
		t.Fatalf("found only %d workflows: %v", len(files), files)
	}
	return files
}

// Every workflow passes actionlint (v1.7.12, built from hack/tools/actionlint
// and cached like the control plane: nothing installed by hand). shellcheck
// and pyflakes are off so the verdict does not depend on what the machine
// has installed.
func TestWorkflowsPassActionlint(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	bin, err := testcluster.EnsureTool(ctx, "actionlint", "github.com/rhysd/actionlint/cmd/actionlint", testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, f := range workflows(t) {
		rel = append(rel, strings.TrimPrefix(f, "../../"))
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"-no-color", "-shellcheck=", "-pyflakes="}, rel...)...)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint %s: %v\n%s", strings.Join(rel, " "), err, out)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// workflow is what the rules below read of a workflow file.
type workflow struct {
	On          map[string]any `json:"on"`
	Permissions any            `json:"permissions"`
	Jobs        map[string]job `json:"jobs"`
}

type job struct {
	If          string         `json:"if"`
	Environment any            `json:"environment"`
	Permissions map[string]any `json:"permissions"`
	Concurrency *struct {
		Group            string `json:"group"`
		CancelInProgress any    `json:"cancel-in-progress"`
	} `json:"concurrency"`
	Steps []struct {
		Uses string            `json:"uses"`
		With map[string]string `json:"with"`
	} `json:"steps"`
}

func parseWorkflow(t *testing.T, path string) workflow {
	t.Helper()
	data := read(t, path)
	// YAML 1.1 reads the key "on" as true; name it back.
	data = []byte(strings.Replace(string(data), "\non:", "\n\"on\":", 1))
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return w
}

// Examples and CI only use inputs the actions declare.
func TestWorkflowsUseDeclaredInputs(t *testing.T) {
	t.Parallel()
	declared := func(path string) map[string]bool {
		var spec struct {
			Inputs map[string]any `json:"inputs"`
		}
		if err := yaml.Unmarshal(read(t, path), &spec); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for k := range spec.Inputs {
			out[k] = true
		}
		return out
	}
	action, setup := declared("../../action.yml"), declared("../../setup/action.yml")
	used := 0
	for _, f := range workflows(t) {
		for name, j := range parseWorkflow(t, f).Jobs {
			for _, s := range j.Steps {
				var inputs map[string]bool
				switch {
				case s.Uses == "./" || strings.HasPrefix(s.Uses, "kustomize-deploy/kustomize-deploy@"):
					inputs = action
				case strings.HasPrefix(s.Uses, "kustomize-deploy/kustomize-deploy/setup@"):
					inputs = setup
				default:
					continue
				}
				used++
				for k := range s.With {
					if !inputs[k] {
						t.Errorf("%s: job %s: input %q is not declared by %s", f, name, k, s.Uses)
					}
				}
			}
		}
	}
	if used < 10 {
		t.Errorf("only %d steps use the actions", used)
	}
}

// The examples hold up as users copy them: least privilege, applies that
// queue and are never cancelled, environment protection for anything with
// cluster credentials, manual runs only from the default branch.
func TestExamplesFollowTheRules(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../examples/workflows/*.yml")
	var names []string
	// The concurrency groups of jobs that apply and of jobs that check
	// drift: GitHub keeps one pending run per group, so a drift run in an
	// apply group could replace a pending apply (docs/action.md).
	applyGroups, driftGroups := map[string]string{}, map[string]string{}
	for _, f := range files {
		names = append(names, filepath.Base(f))
		w := parseWorkflow(t, f)
		if w.Permissions == nil {
			t.Errorf("%s: no top-level permissions", f)
		}
		_, dispatch := w.On["workflow_dispatch"]
		for name, j := range w.Jobs {
			writes, drift := false, false
			for _, s := range j.Steps {
				if !strings.HasPrefix(s.Uses, "kustomize-deploy/kustomize-deploy@") {
					continue
				}
				if s.With["kubeconfig"] != "" || s.With["eks-cluster"] != "" || s.With["gke-cluster"] != "" || s.With["aks-cluster"] != "" {
					writes = writes || s.With["mode"] != "diff"
					drift = drift || s.With["mode"] == "drift"
				}
			}
			if !writes {
				continue
			}
			if j.Concurrency != nil {
				groups := applyGroups
				if drift {
					groups = driftGroups
				}
				groups[j.Concurrency.Group] = filepath.Base(f) + " job " + name
			}
			if j.Environment == nil {
				t.Errorf("%s: job %s writes to a cluster without an environment (protection rules)", f, name)
			}
			if j.Concurrency == nil || j.Concurrency.Group == "" || j.Concurrency.CancelInProgress != false {
				t.Errorf("%s: job %s writes to a cluster without a concurrency group that never cancels (cancel-in-progress: false)", f, name)
			}
			if dispatch && !strings.Contains(j.If, "default_branch") {
				t.Errorf("%s: job %s can be dispatched from any branch (want an if: on github.event.repository.default_branch)", f, name)
			}
		}
	}
	for g, where := range driftGroups {
		if other, ok := applyGroups[g]; ok {
			t.Errorf("%s checks drift in concurrency group %s, which %s applies in: a drift run could replace a pending apply", where, g, other)
		}
	}
	if len(driftGroups) == 0 || len(applyGroups) == 0 {
		t.Errorf("no drift (%d) or apply (%d) concurrency groups found: the rule checks nothing", len(driftGroups), len(applyGroups))
	}
	sort.Strings(names)
	want := []string{"age-key.yml", "apply.yml", "aws-eks.yml", "azure-aks.yml", "clusters.yml", "drift.yml", "fanout.yml", "fork-pr-publish.yml", "gcp-gke.yml", "multi-unit.yml", "pr-diff.yml", "rollback.yml"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("examples mismatch, update the list in docs/action.md too (-want +got):\n%s", diff)
	}
}

// docs/action.md's list of examples links every example workflow, so a
// new one is found by its readers.
func TestExamplesAreListed(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/action.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../examples/workflows/*.yml")
	if len(files) == 0 {
		t.Fatal("no example workflows")
	}
	for _, f := range files {
		if link := "(../examples/workflows/" + filepath.Base(f) + ")"; !strings.Contains(string(doc), link) {
			t.Errorf("docs/action.md does not link %s", f)
		}
	}
}

// Every workflow of the repository itself declares its permissions.
func TestRepositoryWorkflowsDeclarePermissions(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../.github/workflows/*.yml")
	for _, f := range files {
		if parseWorkflow(t, f).Permissions == nil {
			t.Errorf("%s: no top-level permissions", f)
		}
	}
}
