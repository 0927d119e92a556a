package release

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// action.yml on a branch runs the published image of its major version:
// no Dockerfile, nothing built in the user's job.
func TestActionRunsAPrebuiltImage(t *testing.T) {
	t.Parallel()
	var spec struct {
		Runs struct {
			Using, Image string
			Args         []string
		} `json:"runs"`
	}
	if err := yaml.Unmarshal(read(t, "../../action.yml"), &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Runs.Using != "docker" || spec.Runs.Image != "docker://ghcr.io/kustomize-deploy/kustomize-deploy:v1" || strings.Join(spec.Runs.Args, " ") != "action" {
		t.Errorf("runs %+v, want the prebuilt image docker://ghcr.io/kustomize-deploy/kustomize-deploy:v1 with args [action]", spec.Runs)
	}
}

func TestPinImage(t *testing.T) {
	t.Parallel()
	ref := "ghcr.io/acme/kustomize-deploy:v1.4.2@" + digest
	out, err := PinImage(read(t, "../../action.yml"), ref)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "\n  image: docker://"+ref+"\n") {
		t.Errorf("pinned action.yml:\n%s", out)
	}
	for _, bad := range []string{
		"ghcr.io/acme/kustomize-deploy:v1.4.2",             // no digest: the tag could move
		"ghcr.io/acme/kustomize-deploy@" + digest,          // no tag: nobody can tell the version
		"docker.io/acme/kustomize-deploy:v1.4.2@" + digest, // not where the release pushes
		"ghcr.io/Acme/kustomize-deploy:v1.4.2@" + digest,   // registries want lower case
	} {
		if _, err := PinImage(read(t, "../../action.yml"), bad); err == nil {
			t.Errorf("PinImage accepted %q", bad)
		}
	}
	if _, err := PinImage([]byte("runs:\n  using: docker\n"), ref); err == nil {
		t.Error("PinImage accepted an action.yml without an image line")
	}
}

func TestPinSetup(t *testing.T) {
	t.Parallel()
	out, err := PinSetup(read(t, "../../setup/action.yml"), "v1.4.2", "acme/kustomize-deploy")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`default: v1.4.2 # release-pin: version`, `default: acme/kustomize-deploy # release-pin: repository`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("pinned setup/action.yml lacks %q:\n%s", want, out)
		}
	}
	if _, err := PinSetup(read(t, "../../setup/action.yml"), "1.4.2", "acme/kustomize-deploy"); err == nil {
		t.Error("a version without v was accepted")
	}
	if _, err := PinSetup(read(t, "../../setup/action.yml"), "v1.4.2", "acme"); err == nil {
		t.Error("a repository without owner was accepted")
	}
}

func TestCheckChecksums(t *testing.T) {
	t.Parallel()
	var full []string
	for _, name := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64.exe", "windows_arm64.exe"} {
		full = append(full, strings.Repeat("a", 64)+"  kustomize-deploy_"+name)
	}
	if err := CheckChecksums([]byte(strings.Join(full, "\n") + "\n")); err != nil {
		t.Errorf("complete sums: %v", err)
	}
	if err := CheckChecksums([]byte(strings.Join(full[1:], "\n"))); err == nil || !strings.Contains(err.Error(), "linux_amd64") {
		t.Errorf("missing linux_amd64: %v", err)
	}
	if err := CheckChecksums([]byte(strings.Join(append(full, "deadbeef  evil.sh"), "\n"))); err == nil {
		t.Error("a stray line was accepted")
	}
}

// The Marketplace shows at most 125 characters of an action's description.
func TestMarketplaceDescriptions(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"../../action.yml", "../../setup/action.yml"} {
		var spec struct {
			Name, Description string
		}
		if err := yaml.Unmarshal(read(t, path), &spec); err != nil {
			t.Fatal(err)
		}
		if n := len([]rune(spec.Description)); n == 0 || n >= 125 {
			t.Errorf("%s: description of %d characters, want 1 to 124: %q", path, n, spec.Description)
		}
		if spec.Name == "" {
			t.Errorf("%s: no name", path)
		}
	}
}
