package release

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// action.yml on a branch pins no release: it builds its own source, so
// @main runs main; the repository it would install from is this one's.
func TestActionOnABranchBuildsItsSource(t *testing.T) {
	t.Parallel()
	pins, err := ReadActionPins(read(t, "../../action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if pins != (ActionPins{Version: "", Repository: "kustomize-deploy/kustomize-deploy"}) {
		t.Errorf("action.yml on a branch pins %+v, want no version and the repository kustomize-deploy/kustomize-deploy", pins)
	}
}

func TestPinAction(t *testing.T) {
	t.Parallel()
	out, err := PinAction(read(t, "../../action.yml"), "v1.4.2", "acme/kustomize-deploy")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`KD_PIN: v1.4.2 # release-pin: version`, `KD_REPOSITORY: acme/kustomize-deploy # release-pin: repository`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("pinned action.yml lacks %q:\n%s", want, out)
		}
	}
	// Only the two lines change: the inputs, outputs and steps are those
	// of the branch.
	if a, b := strings.Count(string(out), "\n"), strings.Count(string(read(t, "../../action.yml")), "\n"); a != b {
		t.Errorf("pinning changed the number of lines from %d to %d", b, a)
	}
	for _, bad := range []struct{ ver, repo string }{
		{"1.4.2", "acme/kustomize-deploy"},           // no v
		{"v1.4", "acme/kustomize-deploy"},            // not a release
		{"v1.4.2\n    evil: x", "acme/kd"},           // YAML smuggled in
		{"v1.4.2", "acme"},                           // no owner
		{"v1.4.2", "acme/kd # release-pin: version"}, // a second marker
	} {
		if _, err := PinAction(read(t, "../../action.yml"), bad.ver, bad.repo); err == nil {
			t.Errorf("PinAction accepted %q %q", bad.ver, bad.repo)
		}
	}
	if _, err := PinAction([]byte("runs:\n  using: composite\n"), "v1.4.2", "acme/kd"); err == nil {
		t.Error("PinAction accepted an action.yml without marked lines")
	}
	docker := "runs:\n  using: docker\n  env:\n    A: \"\" # release-pin: version\n    B: x # release-pin: repository\n"
	if _, err := PinAction([]byte(docker), "v1.4.2", "acme/kd"); err == nil || !strings.Contains(err.Error(), "composite") {
		t.Errorf("PinAction of a docker action: %v", err)
	}
}

func TestPinSetup(t *testing.T) {
	t.Parallel()
	out, err := PinSetup(read(t, "../../setup/action.yml"), "v1.4.2", "acme/kustomize-deploy")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`KD_PIN: v1.4.2 # release-pin: version`, `default: acme/kustomize-deploy # release-pin: repository`} {
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
	for _, stray := range []string{
		"deadbeef  kustomize-deploy_linux_amd64.tar.gz",               // not a sha256
		strings.Repeat("a", 64) + "  evil.sh",                         // not the release's
		strings.Repeat("a", 64) + "  ../kustomize-deploy_linux_amd64", // a path
	} {
		if err := CheckChecksums([]byte(strings.Join(append(full, stray), "\n"))); err == nil {
			t.Errorf("the line %q was accepted", stray)
		}
	}
	// The archives the release holds next to the binaries are listed too.
	archives := append(full, strings.Repeat("c", 64)+"  kustomize-deploy_linux_amd64.tar.gz", strings.Repeat("d", 64)+"  kustomize-deploy_windows_arm64.zip")
	if err := CheckChecksums([]byte(strings.Join(archives, "\n"))); err != nil {
		t.Errorf("sums with archives: %v", err)
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
