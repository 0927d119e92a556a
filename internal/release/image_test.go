package release

import (
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct{ cmd, args string }

// stages parses the Dockerfile into its stages' instructions.
func stages(t *testing.T) [][]instruction {
	t.Helper()
	var out [][]instruction
	var cur string
	for _, line := range strings.Split(string(read(t, "../../Dockerfile")), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		cur = strings.Join(strings.Fields(cur+trimmed), " ")
		cmd, args, _ := strings.Cut(cur, " ")
		cur = ""
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			out = append(out, nil)
		}
		if len(out) == 0 {
			t.Fatalf("Dockerfile: %s before FROM", in.cmd)
		}
		out[len(out)-1] = append(out[len(out)-1], in)
	}
	return out
}

func find(stage []instruction, cmd, contains string) []instruction {
	var out []instruction
	for _, in := range stage {
		if in.cmd == cmd && strings.Contains(in.args, contains) {
			out = append(out, in)
		}
	}
	return out
}

// The image holds the static binary, git and CA certificates, nothing else,
// and runs as root (GitHub's documentation: do not set USER).
func TestImageHoldsOnlyWhatTheActionNeeds(t *testing.T) {
	t.Parallel()
	st := stages(t)
	if len(st) != 2 {
		t.Fatalf("%d stages, want build and runtime", len(st))
	}
	final := st[1]
	// Both stages pinned by digest (hack/check-base-pins.sh checks, at
	// release, that each is a multi-platform index; dependabot keeps them
	// current).
	if !regexp.MustCompile(`^alpine:3\.[0-9]+@sha256:[0-9a-f]{64}$`).MatchString(final[0].args) {
		t.Errorf("runtime base %q, want alpine:3.<minor>@sha256:<digest> (pinned, small, has git)", final[0].args)
	}
	if !regexp.MustCompile(`^--platform=\$BUILDPLATFORM golang:1\.[0-9]+@sha256:[0-9a-f]{64} AS build$`).MatchString(st[0][0].args) {
		t.Errorf("build stage %q, want --platform=$BUILDPLATFORM golang:1.<minor>@sha256:<digest> AS build", st[0][0].args)
	}
	var other []string
	for _, in := range final[1:] {
		switch {
		case in.cmd == "RUN" && strings.HasPrefix(in.args, "apk add --no-cache git ca-certificates &&"):
		case in.cmd == "COPY" || in.cmd == "ENTRYPOINT":
		default:
			other = append(other, in.cmd+" "+in.args)
		}
	}
	if len(other) > 0 {
		t.Errorf("the runtime stage does more than install git and CA certificates and copy the binary: %q", other)
	}
	copies := find(final, "COPY", "")
	if len(copies) != 1 {
		t.Fatalf("runtime COPY instructions %v, want one", copies)
	}
	f := strings.Fields(copies[0].args)
	if len(f) != 3 || f[0] != "--from=build" {
		t.Fatalf("COPY %q, want --from=build <binary> <path>", copies[0].args)
	}
	var entry []string
	if e := find(final, "ENTRYPOINT", ""); len(e) != 1 || json.Unmarshal([]byte(e[0].args), &entry) != nil {
		t.Fatalf("ENTRYPOINT %v, want one in exec form", e)
	}
	if len(entry) != 1 || entry[0] != f[2] {
		t.Errorf("ENTRYPOINT %v does not run the binary copied to %s", entry, f[2])
	}
	// The build stage's binary is where make build puts it.
	wd := find(st[0], "WORKDIR", "")
	if len(wd) != 1 || f[1] != wd[0].args+"/bin/kustomize-deploy" {
		t.Errorf("COPY takes %s, but the build writes %s/bin/kustomize-deploy", f[1], wd)
	}
	ignore := string(read(t, "../../.dockerignore"))
	for _, want := range []string{"\n.git\n", "\nbin\n"} {
		if !strings.Contains("\n"+ignore, want) {
			t.Errorf(".dockerignore lacks %q", strings.TrimSpace(want))
		}
	}
}

// The Dockerfile's build command, run here as BuildKit runs it for the
// image's platform, makes a static binary that runs the action. (No Docker
// daemon on the build machines: the image itself is built and run by CI's
// `action` job.)
func TestImageBuildCommandMakesAStaticBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	runs := find(stages(t)[0], "RUN", "make build")
	if len(runs) != 1 {
		t.Fatalf("build stage RUN ... make build: %v, want one", runs)
	}
	var words []string
	for _, w := range strings.Fields(runs[0].args) {
		if !strings.HasPrefix(w, "--mount=") {
			words = append(words, w)
		}
	}
	command := strings.Join(words, " ")
	if !strings.Contains(command, "CGO_ENABLED=0") {
		t.Errorf("the build command %q does not disable cgo", command)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "TARGETOS=linux", "TARGETARCH="+runtime.GOARCH,
		"VERSION=v0.0.0-image-test", "COMMIT=0123456789abcdef", "BINDIR="+out, "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", command, err, b)
	}
	bin := filepath.Join(out, "kustomize-deploy")

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has an ELF interpreter: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" || settings["GOOS"] != "linux" {
		t.Errorf("build settings %v, want CGO_ENABLED=0, -trimpath, GOOS=linux", settings)
	}

	version, err := exec.Command(bin, "version", "--output", "json").Output()
	if err != nil || !strings.Contains(string(version), `"v0.0.0-image-test"`) {
		t.Errorf("version: %s %v", version, err)
	}
	// action.yml runs the image with args [action].
	if b, err := exec.Command(bin, "action", "--help").CombinedOutput(); err != nil {
		t.Errorf("kustomize-deploy action --help: %v\n%s", err, b)
	}
	if fi, err := os.Stat(bin); err == nil {
		t.Logf("static binary: %d bytes", fi.Size())
	}
}
