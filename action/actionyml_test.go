package action

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
	"sigs.k8s.io/yaml"
)

// Every input action.yml declares is read by the action and documented in
// the inputs table of docs/action.md, and the action reads no undeclared
// input.
func TestActionYAMLInputsAreReadAndDocumented(t *testing.T) {
	data, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Inputs map[string]struct {
			Description string `json:"description"`
		} `json:"inputs"`
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

	readme, err := os.ReadFile("../docs/action.md")
	if err != nil {
		t.Fatal(err)
	}
	table := string(readme)
	if i := strings.Index(table, "## Inputs"); i >= 0 {
		table = table[i:]
	}
	if i := strings.Index(table, "## Outputs"); i >= 0 {
		table = table[:i]
	}
	declared := map[string]bool{}
	for name, in := range spec.Inputs {
		key := strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
		declared[key] = true
		if !read[key] {
			t.Errorf("input %q is declared in action.yml but never read", name)
		}
		if in.Description == "" {
			t.Errorf("input %q has no description in action.yml", name)
		}
		if !strings.Contains(table, "`"+name+"`") {
			t.Errorf("input %q is not in the inputs table of docs/action.md", name)
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
