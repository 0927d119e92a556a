// Package release makes the release commit: it pins, in the files users'
// workflows read at a tag, the version and repository of the release
// binary the Action (action.yml, a composite action) and the setup action
// install, next to the checksums they verify it with (setup/checksums.txt).
// .github/workflows/release.yml runs it (cmd/release-pin); its tests also
// hold what ships to the rules of issue 14 and 23: a binary on the runner,
// built from source on any ref but a release, a static binary, workflows
// that pass actionlint.
package release

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

var (
	version    = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$`)
	repository = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$`)
)

// checkPin refuses a version or repository the release could not be.
func checkPin(ver, repo string) error {
	if !version.MatchString(ver) {
		return fmt.Errorf("version %q is not v<major>.<minor>.<patch>", ver)
	}
	if !repository.MatchString(repo) {
		return fmt.Errorf("repository %q is not <owner>/<name>", repo)
	}
	return nil
}

// pinMarked sets the value of the one "key: value" line of file that ends
// in "# release-pin: <field>" (any key, any indentation) to value.
func pinMarked(data []byte, file, field, value string) ([]byte, error) {
	line := regexp.MustCompile(`(?m)^(\s+[A-Za-z_][A-Za-z0-9_-]*: ).*( # release-pin: ` + regexp.QuoteMeta(field) + `)$`)
	if n := len(line.FindAll(data, -1)); n != 1 {
		return nil, fmt.Errorf("%s: %d lines marked 'release-pin: %s', want 1", file, n, field)
	}
	return line.ReplaceAll(data, []byte("${1}"+value+"${2}")), nil
}

// pinBoth pins version and repository in file.
func pinBoth(data []byte, file, ver, repo string) ([]byte, error) {
	if err := checkPin(ver, repo); err != nil {
		return nil, err
	}
	out, err := pinMarked(data, file, "version", ver)
	if err == nil {
		out, err = pinMarked(out, file, "repository", repo)
	}
	return out, err
}

// ActionPins are the pinned values of action.yml: the version its plan
// step hands to setup/plan.sh as KD_PIN (empty: build from source) and the
// repository its install step downloads from.
type ActionPins struct{ Version, Repository string }

// ReadActionPins reads what action.yml pins, and checks the shape the pins
// live in: a composite action whose plan step decides and whose install
// step runs setup/install.sh.
func ReadActionPins(actionYML []byte) (ActionPins, error) {
	var spec struct {
		Runs struct {
			Using string `json:"using"`
			Steps []struct {
				ID  string            `json:"id"`
				Run string            `json:"run"`
				Env map[string]string `json:"env"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := yaml.Unmarshal(actionYML, &spec); err != nil {
		return ActionPins{}, fmt.Errorf("action.yml: %w", err)
	}
	if spec.Runs.Using != "composite" {
		return ActionPins{}, fmt.Errorf("action.yml: runs.using %q, want composite", spec.Runs.Using)
	}
	var pins ActionPins
	found := map[string]bool{}
	for _, s := range spec.Runs.Steps {
		switch s.ID {
		case "plan":
			pins.Version, found["plan"] = s.Env["KD_PIN"], strings.Contains(s.Run, "setup/plan.sh")
		case "install":
			pins.Repository, found["install"] = s.Env["KD_REPOSITORY"], strings.Contains(s.Run, "setup/install.sh")
		}
	}
	if !found["plan"] || !found["install"] {
		return ActionPins{}, fmt.Errorf("action.yml: want a step plan running setup/plan.sh and a step install running setup/install.sh")
	}
	return pins, nil
}

// PinAction returns action.yml with the release's version and repository
// set (the lines marked "release-pin: version" and "release-pin:
// repository"): at the release commit the Action installs exactly this
// release's binary, verified against setup/checksums.txt, instead of
// building its source.
func PinAction(actionYML []byte, ver, repo string) ([]byte, error) {
	out, err := pinBoth(actionYML, "action.yml", ver, repo)
	if err != nil {
		return nil, err
	}
	pins, err := ReadActionPins(out)
	if err != nil {
		return nil, fmt.Errorf("after pinning: %w", err)
	}
	if pins != (ActionPins{ver, repo}) {
		return nil, fmt.Errorf("action.yml after pinning: %+v", pins)
	}
	return out, nil
}

// PinSetup returns the setup action's action.yml with the release's
// version handed to its plan step (KD_PIN) and the default of its
// repository input set to what this release is. The lines to change end
// in "# release-pin: version" and "# release-pin: repository".
func PinSetup(setupYML []byte, ver, repo string) ([]byte, error) {
	out, err := pinBoth(setupYML, "setup/action.yml", ver, repo)
	if err != nil {
		return nil, err
	}
	var spec struct {
		Inputs map[string]struct {
			Default string `json:"default"`
		} `json:"inputs"`
		Runs struct {
			Steps []struct {
				ID  string            `json:"id"`
				Env map[string]string `json:"env"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := yaml.Unmarshal(out, &spec); err != nil {
		return nil, fmt.Errorf("setup/action.yml after pinning: %w", err)
	}
	pin := ""
	for _, s := range spec.Runs.Steps {
		if s.ID == "plan" {
			pin = s.Env["KD_PIN"]
		}
	}
	if pin != ver || spec.Inputs["repository"].Default != repo {
		return nil, fmt.Errorf("setup/action.yml after pinning: plan step's KD_PIN %q, input repository's default %q", pin, spec.Inputs["repository"].Default)
	}
	return out, nil
}

// checksumLine is one line of sha256sum's output for a release artifact:
// the raw binaries setup/install.sh downloads, and whatever else the
// release holds next to them (archives).
var checksumLine = regexp.MustCompile(`^[0-9a-f]{64}  (kustomize-deploy_[A-Za-z0-9._-]+)$`)

// CheckChecksums checks that sums (the release's checksums.txt) has a line
// for each binary the install script may ask for, and only well-formed
// lines of the release's own artifacts.
func CheckChecksums(sums []byte) error {
	want := map[string]bool{}
	for _, os := range []string{"linux", "darwin", "windows"} {
		for _, arch := range []string{"amd64", "arm64"} {
			name := "kustomize-deploy_" + os + "_" + arch
			if os == "windows" {
				name += ".exe"
			}
			want[name] = true
		}
	}
	for i, l := range splitLines(sums) {
		m := checksumLine.FindStringSubmatch(l)
		if m == nil {
			return fmt.Errorf("checksums.txt line %d: %q is not '<sha256>  kustomize-deploy_<artifact>'", i+1, l)
		}
		delete(want, m[1])
	}
	if len(want) > 0 {
		var missing []string
		for name := range want {
			missing = append(missing, name)
		}
		sort.Strings(missing)
		return fmt.Errorf("checksums.txt has no line for %s", strings.Join(missing, ", "))
	}
	return nil
}

func splitLines(b []byte) []string {
	var out []string
	for _, l := range regexp.MustCompile(`\r?\n`).Split(string(b), -1) {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
