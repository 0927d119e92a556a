package docs

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated tables of docs/action.md from action.yml (make docs)")

// root is the repository, seen from this package.
const root = "../.."

// The Action's inputs and outputs tables in docs/action.md are generated
// from action.yml, so an input added, renamed or described anew without
// regenerating them (make docs) fails here.
func TestActionReferenceIsCurrent(t *testing.T) {
	doc := readRepoFile(t, "docs/action.md")
	got, err := ActionReference(doc, readRepoFile(t, "action.yml"))
	if err != nil {
		t.Fatalf("docs/action.md: %v", err)
	}
	if *update {
		if err := os.WriteFile(filepath.Join(root, "docs/action.md"), got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(got) != string(doc) {
		t.Errorf("docs/action.md's inputs or outputs table is stale: run make docs\nfirst difference:\n%s", firstDifference(string(doc), string(got)))
	}
}

func TestReadActionKeepsOrderAndEscapesCells(t *testing.T) {
	a, err := ReadAction([]byte(`name: x
inputs:
  # == First things ==
  # What most workflows set.

  # The reference of zeta, over
  # two lines, with <angle> brackets.
  zeta:
    description: First declared, shown first.
    required: true
  alpha:
    description: "Sets kustomize-deploy/<environment>/<name>; a|b, or ` + "`c|d <e>`" + `."
    default: "4"

  # == Then ==
  token:
    description: >-
      Folded
      over lines.
    default: ${{ github.token }}
  old:
    description: Renamed new.
    deprecationMessage: Use new.
outputs:
  result:
    description: The result.
`))
	if err != nil {
		t.Fatal(err)
	}
	want := "### First things\n\nWhat most workflows set.\n\n" +
		"| input | default | description |\n|---|---|---|\n" +
		"| `zeta` | required | First declared, shown first. |\n" +
		"| `alpha` | `4` | Sets kustomize-deploy/&lt;environment&gt;/&lt;name&gt;; a\\|b, or `c\\|d <e>`. |\n" +
		"\n- `zeta`: The reference of zeta, over two lines, with &lt;angle&gt;\n  brackets.\n" +
		"\n### Then\n\n" +
		"| input | default | description |\n|---|---|---|\n" +
		"| `token` | `${{ github.token }}` | Folded over lines. |\n" +
		"| `old` |  | **Deprecated.** Use new. |\n"
	if got := InputsTable(a); got != want {
		t.Errorf("inputs table:\n%s\nwant:\n%s", got, want)
	}
	if got, want := OutputsTable(a), "| output | description |\n|---|---|\n| `result` | The result. |\n"; got != want {
		t.Errorf("outputs table:\n%s\nwant:\n%s", got, want)
	}
}

// What GitHub shows of an input (editors' hints, the Marketplace) is short:
// the reference is the comment above it; and no input is left out of a
// group.
func TestReadActionWantsShortDescriptionsInGroups(t *testing.T) {
	long := strings.Repeat("x", MaxInputDescription+1)
	for name, tc := range map[string]struct{ yml, want string }{
		"too long": {"inputs:\n  # == G ==\n  a:\n    description: " + long + "\n", "input a: description of 201 characters, want at most 200"},
		"no group": {"inputs:\n  a:\n    description: ok\n", "input a is in no group"},
	} {
		if _, err := ReadAction([]byte(tc.yml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, tc.want)
		}
	}
}

func TestReadActionWantsDescriptions(t *testing.T) {
	_, err := ReadAction([]byte("inputs:\n  # == G ==\n  a:\n    default: x\n  b:\n    description: ok\noutputs:\n  c: {}\n"))
	if err == nil || !strings.Contains(err.Error(), "input a has no description") || !strings.Contains(err.Error(), "output c has no description") {
		t.Errorf("got %v, want both missing descriptions named", err)
	}
}

func TestSplice(t *testing.T) {
	doc := "# A\n\n" + beginMarker("inputs") + "\nold\nrows\n" + endMarker("inputs") + "\n\nafter\n"
	got, err := Splice([]byte(doc), "inputs", "| new |\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# A\n\n" + beginMarker("inputs") + "\n| new |\n" + endMarker("inputs") + "\n\nafter\n"
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	empty := beginMarker("inputs") + "\n" + endMarker("inputs") + "\n"
	if got, err := Splice([]byte(empty), "inputs", "x"); err != nil || string(got) != beginMarker("inputs")+"\nx\n"+endMarker("inputs")+"\n" {
		t.Errorf("between adjacent markers: %q, %v", got, err)
	}
	for name, bad := range map[string]string{
		"no markers":    "# A\n",
		"no end":        beginMarker("inputs") + "\nx\n",
		"twice":         doc + doc,
		"other section": strings.ReplaceAll(doc, "inputs", "outputs"),
	} {
		if _, err := Splice([]byte(bad), "inputs", "x"); err == nil {
			t.Errorf("%s: spliced", name)
		}
	}
}

func readRepoFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// firstDifference shows the first line where have and want differ.
func firstDifference(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(h) || i < len(w); i++ {
		var hl, wl string
		if i < len(h) {
			hl = h[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if hl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n- " + hl + "\n+ " + wl
		}
	}
	return "(none)"
}
