package action

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"
	"sigs.k8s.io/yaml"
)

// installInputs are the inputs of action.yml that its steps installing the
// binary read (setup/install.sh), not the binary.
var installInputs = map[string]bool{"download-url": true}

// Every input action.yml declares is read by the action (or by the steps
// that install it: installInputs), and the action reads no undeclared
// input. (Their documentation, the tables of
// docs/action.md, is generated from action.yml: see internal/docs.)
func TestActionYAMLInputsAreRead(t *testing.T) {
	data, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Inputs map[string]struct{} `json:"inputs"`
	}
	if err := yaml.Unmarshal(data, &spec); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	read := map[string]bool{}
	gha := githubactions.New(githubactions.WithGetenv(func(k string) string {
		if name, ok := strings.CutPrefix(k, "INPUT_"); ok {
			read[name] = true
		}
		return ""
	}))
	_, _ = readInputs(gha) // errors (no path) do not matter here

	declared := map[string]bool{}
	for name := range spec.Inputs {
		key := strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
		declared[key] = true
		if !read[key] && !installInputs[name] {
			t.Errorf("input %q is declared in action.yml but never read", name)
		}
	}
	var undeclared []string
	for key := range read {
		if !declared[key] {
			undeclared = append(undeclared, key)
		}
	}
	sort.Strings(undeclared)
	if len(undeclared) > 0 {
		t.Errorf("the action reads inputs action.yml does not declare: %v", undeclared)
	}
}

// The defaults action.yml declares, which the runner passes as inputs,
// are the ones the action and the CLI fall back on (spec.Default,
// units.DefaultParallel, kube's QPS and burst, prune's protected kinds):
// a run of the action and one of the binary on a laptop behave alike.
func TestActionYAMLDefaultsAreTheEngines(t *testing.T) {
	data, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Inputs map[string]struct {
			Default *string `json:"default"`
		} `json:"inputs"`
	}
	if err := yaml.Unmarshal(data, &spec); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	given := map[string]string{"INPUT_PATH": "apps"}
	for name, in := range spec.Inputs {
		if in.Default != nil && !strings.Contains(*in.Default, "${{") {
			given["INPUT_"+strings.ToUpper(name)] = *in.Default
		}
	}
	withDefaults, err := inputs(given)
	if err != nil {
		t.Fatalf("action.yml's defaults: %v", err)
	}
	without, err := inputs(map[string]string{"INPUT_PATH": "apps"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(without, withDefaults); diff != "" {
		t.Errorf("action.yml's defaults differ from the engine's (-engine +action.yml):\n%s", diff)
	}
}

// The runner passes a composite action's inputs to none of its steps:
// action.yml's run step hands each one on, as the exact variable the
// binary reads (INPUT_ and the name upper-cased, dashes kept), and maps
// each output the action declares to the run step's. Nothing else is
// passed as INPUT_*, and nothing is mapped from another step.
func TestActionYAMLForwardsEveryInputAndOutput(t *testing.T) {
	a := readComposite(t, "../action.yml")
	var run *compositeStep
	for i, s := range a.Runs.Steps {
		if s.ID == "run" {
			run = &a.Runs.Steps[i]
		}
	}
	if run == nil || !strings.Contains(run.Run, `"$KD_BIN" action`) {
		t.Fatalf("action.yml has no step run that runs the binary's action: %+v", run)
	}
	// Git Bash on Windows converts environment values that look like Unix
	// paths when it starts a Windows program, unless their names start
	// with a prefix MSYS2_ENV_CONV_EXCL lists (';'-separated): every
	// INPUT_* must reach the binary as written.
	excluded := false
	for _, prefix := range strings.Split(run.Env["MSYS2_ENV_CONV_EXCL"], ";") {
		excluded = excluded || prefix == "*" || (prefix != "" && strings.HasPrefix("INPUT_", prefix))
	}
	if !excluded {
		t.Errorf("step run: MSYS2_ENV_CONV_EXCL %q does not keep INPUT_* from Git Bash's path conversion", run.Env["MSYS2_ENV_CONV_EXCL"])
	}
	read := map[string]bool{}
	gha := githubactions.New(githubactions.WithGetenv(func(k string) string {
		if strings.HasPrefix(k, "INPUT_") {
			read[k] = true
		}
		return ""
	}))
	_, _ = readInputs(gha)
	forwarded := map[string]bool{}
	for k, v := range run.Env {
		if !strings.HasPrefix(k, "INPUT_") {
			continue
		}
		forwarded[k] = true
		if !read[k] {
			t.Errorf("step run sets %s, which the binary does not read", k)
		}
		m := regexp.MustCompile(`^\$\{\{ inputs\.([a-z0-9-]+) \}\}$`).FindStringSubmatch(v)
		if m == nil || "INPUT_"+strings.ToUpper(m[1]) != k {
			t.Errorf("step run: %s: %q, want ${{ inputs.%s }}", k, v, strings.ToLower(strings.TrimPrefix(k, "INPUT_")))
		} else if _, ok := a.Inputs[m[1]]; !ok {
			t.Errorf("step run: %s reads input %s, which action.yml does not declare", k, m[1])
		}
	}
	for name := range a.Inputs {
		if k := "INPUT_" + strings.ToUpper(name); !forwarded[k] && !installInputs[name] {
			t.Errorf("input %s is not handed on to the binary (env %s of step run)", name, k)
		}
	}
	for name := range installInputs {
		used := false
		for _, s := range a.Runs.Steps {
			for _, v := range s.Env {
				used = used || strings.Contains(v, "inputs."+name)
			}
		}
		if _, declared := a.Inputs[name]; !declared || !used {
			t.Errorf("input %s: declared %v, read by a step %v; want both (the install step reads it)", name, declared, used)
		}
	}
	if len(a.Outputs) == 0 {
		t.Fatal("action.yml declares no outputs")
	}
	for name, o := range a.Outputs {
		if want := "${{ steps.run.outputs." + name + " }}"; o.Value != want {
			t.Errorf("output %s: value %q, want %q", name, o.Value, want)
		}
	}
}
