// Package release makes the release commit: it pins, in the files users'
// workflows read at a tag, the image action.yml runs (tag and digest), and
// the version, repository and checksums the setup action installs from.
// .github/workflows/release.yml runs it (cmd/release-pin); its tests also
// hold what ships to the rules of issue 14: a prebuilt image, a static
// binary, workflows that pass actionlint.
package release

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// imageRef is what the release pins: a ghcr.io image by tag and digest.
var imageRef = regexp.MustCompile(`^ghcr\.io/[a-z0-9][a-z0-9._/-]*:v[0-9][0-9A-Za-z.+-]*@sha256:[0-9a-f]{64}$`)

// imageLine is action.yml's runs.image line.
var imageLine = regexp.MustCompile(`(?m)^  image: .*$`)

// PinImage returns actionYML with runs.image set to docker://ref, ref
// being ghcr.io/<owner>/<name>:<tag>@sha256:<digest>: the runner pulls
// exactly that image, whatever later happens to the tag.
func PinImage(actionYML []byte, ref string) ([]byte, error) {
	if !imageRef.MatchString(ref) {
		return nil, fmt.Errorf("image %q is not ghcr.io/<owner>/<name>:v<version>@sha256:<digest>", ref)
	}
	if n := len(imageLine.FindAll(actionYML, -1)); n != 1 {
		return nil, fmt.Errorf("action.yml: %d lines '  image: ...', want 1", n)
	}
	out := imageLine.ReplaceAll(actionYML, []byte("  image: docker://"+ref))
	var spec struct {
		Runs struct{ Using, Image string } `json:"runs"`
	}
	if err := yaml.Unmarshal(out, &spec); err != nil {
		return nil, fmt.Errorf("action.yml after pinning: %w", err)
	}
	if spec.Runs.Using != "docker" || spec.Runs.Image != "docker://"+ref {
		return nil, fmt.Errorf("action.yml after pinning: runs %+v", spec.Runs)
	}
	return out, nil
}

var (
	version    = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$`)
	repository = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$`)
)

// PinSetup returns the setup action's action.yml with the defaults of its
// version and repository inputs set to what this release is. The lines to
// change end in "# release-pin: version" and "# release-pin: repository".
func PinSetup(setupYML []byte, ver, repo string) ([]byte, error) {
	if !version.MatchString(ver) {
		return nil, fmt.Errorf("version %q is not v<major>.<minor>.<patch>", ver)
	}
	if !repository.MatchString(repo) {
		return nil, fmt.Errorf("repository %q is not <owner>/<name>", repo)
	}
	out := setupYML
	for field, value := range map[string]string{"version": ver, "repository": repo} {
		line := regexp.MustCompile(`(?m)^(    default: ).*( # release-pin: ` + field + `)$`)
		if n := len(line.FindAll(out, -1)); n != 1 {
			return nil, fmt.Errorf("setup/action.yml: %d default lines marked 'release-pin: %s', want 1", n, field)
		}
		out = line.ReplaceAll(out, []byte("${1}"+value+"${2}"))
	}
	var spec struct {
		Inputs map[string]struct {
			Default string `json:"default"`
		} `json:"inputs"`
	}
	if err := yaml.Unmarshal(out, &spec); err != nil {
		return nil, fmt.Errorf("setup/action.yml after pinning: %w", err)
	}
	if spec.Inputs["version"].Default != ver || spec.Inputs["repository"].Default != repo {
		return nil, fmt.Errorf("setup/action.yml after pinning: inputs %+v", spec.Inputs)
	}
	return out, nil
}

// checksumLine is one line of sha256sum's output for a release binary.
var checksumLine = regexp.MustCompile(`^[0-9a-f]{64}  kustomize-deploy_(linux|darwin|windows)_(amd64|arm64)(\.exe)?$`)

// CheckChecksums checks that sums (dist/checksums.txt) has a line for each
// binary the setup action may ask for, and nothing else.
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
		if !checksumLine.MatchString(l) {
			return fmt.Errorf("checksums.txt line %d: %q is not '<sha256>  kustomize-deploy_<os>_<arch>'", i+1, l)
		}
		delete(want, l[66:])
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
