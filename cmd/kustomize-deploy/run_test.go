package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/version"
)

func TestVersionText(t *testing.T) {
	old := version.Version
	version.Version = "v1.2.3-test"
	t.Cleanup(func() { version.Version = old })

	var out, errOut bytes.Buffer
	if code := run([]string{"version"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d, stderr: %s", code, errOut.String())
	}
	for _, want := range []string{"v1.2.3-test", runtime.Version()} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("version output %q lacks %q", out.String(), want)
		}
	}
}

// --version prints what the version command does.
func TestVersionFlag(t *testing.T) {
	old := version.Version
	version.Version = "v1.2.3-test"
	t.Cleanup(func() { version.Version = old })

	var flag, cmd, errOut bytes.Buffer
	if code := run([]string{"--version"}, &flag, &errOut); code != exitOK {
		t.Fatalf("--version: exit %d, stderr: %s", code, errOut.String())
	}
	if code := run([]string{"version"}, &cmd, &errOut); code != exitOK {
		t.Fatalf("version: exit %d, stderr: %s", code, errOut.String())
	}
	if !strings.Contains(flag.String(), "v1.2.3-test") || flag.String() != cmd.String() {
		t.Errorf("--version printed %q, version %q", flag.String(), cmd.String())
	}
}

func TestVersionJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"version", "--output", "json"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d, stderr: %s", code, errOut.String())
	}
	var got version.Info
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if got.GoVersion != runtime.Version() || got.Version != version.Version {
		t.Errorf("got %+v", got)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"nope"}, {"version", "--output", "yaml"}, {"version", "--bogus"}} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != exitUsage {
			t.Errorf("run(%q) = %d, want %d", args, code, exitUsage)
		}
		if errOut.Len() == 0 {
			t.Errorf("run(%q) printed no explanation", args)
		}
	}
}
