package spec

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

func noEnv(string) string { return "" }

func TestSpecOptions(t *testing.T) {
	dir := t.TempDir()
	env := filepath.Join(dir, "vars.env")
	if err := os.WriteFile(env, []byte("ENV=prod\nREGION=eu\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Default()
	s.Name, s.Path, s.Revision = "web", dir, "abc"
	s.DependsOn = []string{" db ", "", "cache"}
	s.Images = []string{"web=:1.2"}
	s.Labels = []string{"team=shop"}
	s.Substitute, s.SubstituteFrom = []string{"ENV=dev"}, []string{env}
	s.HealthChecks = []string{"Deployment/shop/web", "example.com/Widget/shop/w", "ClusterRole/reader"}
	s.Validation, s.Timeout = "client", time.Minute
	o, err := s.Options(t.Context(), NeedName|NeedPath, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != "web" || o.Dir.Root != dir || o.Dir.Path != dir || o.Dir.Rel != "." || o.Revision != "abc" {
		t.Errorf("unit %q dir %+v revision %q", o.Name, o.Dir, o.Revision)
	}
	if !slices.Equal(o.DependsOn, []string{"db", "cache"}) {
		t.Errorf("depends on %q", o.DependsOn)
	}
	if len(o.Build.Images) != 1 || o.Build.Images[0].NewTag != "1.2" || o.Build.Labels["team"] != "shop" {
		t.Errorf("build %+v", o.Build)
	}
	if o.Substitute["ENV"] != "dev" || o.Substitute["REGION"] != "eu" {
		t.Errorf("substitute %v: --substitute must win over the dotenv file", o.Substitute)
	}
	want := []object.ID{
		{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"},
		{Group: "example.com", Kind: "Widget", Namespace: "shop", Name: "w"},
		{Kind: "ClusterRole", Name: "reader"},
	}
	if !slices.Equal(o.HealthChecks, want) {
		t.Errorf("health checks %v", o.HealthChecks)
	}
	if o.Validation != result.ValidationClient || o.Timeout != time.Minute || !o.Prune || !o.Wait || !o.Decryption.AWSKMS {
		t.Errorf("options %+v", o)
	}
	if b := o.PruneBudget; b.MaxUnits != prune.DefaultMaxUnits || b.Max != 0 || b.Allow {
		t.Errorf("prune budget %+v: by default, at most %d units collected", b, prune.DefaultMaxUnits)
	}
}

// Every bad option is reported, each named by its option (the front end
// turns it into its flag or input), in one error.
func TestSpecOptionErrors(t *testing.T) {
	s := Default()
	s.Name, s.Path = "Bad_Name", filepath.Join(t.TempDir(), "missing")
	s.Images = []string{"web"}
	s.Substitute = []string{"PASSWORD hunter2"}
	s.Labels = []string{"team"}
	s.HealthChecks = []string{"Deployment"}
	s.Validation = "strict"
	s.Timeout = 0
	s.Namespace = "Not A Namespace"
	s.AgeKeys = []string{"AGE-SECRET-KEY-1NOTAKEY"}
	s.PGPKeys = []string{"-----BEGIN PGP PUBLIC KEY BLOCK-----\nNOTAKEY\n-----END PGP PUBLIC KEY BLOCK-----\n"}
	s.PGPKeyFiles = []string{filepath.Join(t.TempDir(), "missing.asc")}
	s.MaxCollect = -1
	s.SchemaDir = filepath.Join(t.TempDir(), "missing")
	s.KubeVersion = "latest"
	_, err := s.Options(t.Context(), NeedName|NeedPath, noEnv)
	var got []Option
	for _, oe := range OptionErrors(err) {
		got = append(got, oe.Option)
		if strings.Contains(oe.Error(), "--") {
			t.Errorf("%v names a flag", oe)
		}
	}
	want := []Option{OptName, OptPath, OptNamespace, OptImage, OptLabel, OptSubstitute, OptAgeKey, OptPGPKey, OptPGPKeyFile, OptKubeVersion, OptValidation, OptSchemaDir, OptMaxCollect, OptTimeout, OptHealthCheck}
	if !slices.Equal(got, want) {
		t.Errorf("errors about %v\nwant          %v\n%v", got, want, err)
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "NOTAKEY") {
		t.Errorf("the error repeats a secret value: %v", err)
	}
}

func TestSpecNeeds(t *testing.T) {
	s := Default()
	if _, err := s.Options(t.Context(), NeedName, noEnv); len(OptionErrors(err)) != 1 || OptionErrors(err)[0].Option != OptName {
		t.Errorf("delete without a name: %v", err)
	}
	if _, err := s.Options(t.Context(), NeedPath, noEnv); len(OptionErrors(err)) != 1 || OptionErrors(err)[0].Option != OptPath {
		t.Errorf("build without a path: %v", err)
	}
	s.Name = "web"
	if _, err := s.Options(t.Context(), NeedName, noEnv); err != nil {
		t.Errorf("delete needs no path: %v", err)
	}
}

func TestSpecRootError(t *testing.T) {
	s := Default()
	s.Path, s.Root = t.TempDir(), filepath.Join(t.TempDir(), "missing")
	_, err := s.Options(t.Context(), NeedPath, noEnv)
	if errs := OptionErrors(err); len(errs) != 1 || errs[0].Option != OptRoot {
		t.Errorf("%v", err)
	}
}

func TestSpecRevisionFromTheEnvironment(t *testing.T) {
	s := Default()
	s.Path = t.TempDir() // not a git work tree
	o, err := s.Options(t.Context(), NeedPath, func(k string) string { return map[string]string{"GITHUB_SHA": "f00"}[k] })
	if err != nil || o.Revision != "f00" {
		t.Errorf("revision %q, err %v", o.Revision, err)
	}
}

// The revision's commit time comes from git, for the out-of-order guard.
func TestSpecRevisionTimeFromGit(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE=2026-11-20T10:00:00Z", "GIT_AUTHOR_DATE=2026-11-20T10:00:00Z")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "one")
	s := Default()
	s.Path = dir
	o, err := s.Options(t.Context(), NeedPath, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if o.Revision != git("rev-parse", "HEAD") || !o.RevisionTime.Equal(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("revision %s at %s", o.Revision, o.RevisionTime)
	}
	s.Revision = "not-a-commit"
	if o, _ := s.Options(t.Context(), NeedPath, noEnv); !o.RevisionTime.IsZero() {
		t.Errorf("a revision git does not know has a time: %s", o.RevisionTime)
	}
}

// A run names itself to others waiting for the unit's lock: the workflow
// run inside GitHub Actions, else who and where it runs; a holder given
// wins.
func TestSpecHolder(t *testing.T) {
	host, _ := os.Hostname()
	for _, tc := range []struct {
		name, given string
		env         map[string]string
		want        string
	}{
		{"github", "", map[string]string{"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/deploy", "GITHUB_RUN_ID": "42", "USER": "runner"},
			"https://github.com/acme/deploy/actions/runs/42"},
		{"laptop", "", map[string]string{"USER": "ana", "GITHUB_RUN_ID": "42"}, "ana@" + host + " (pid " + strconv.Itoa(os.Getpid()) + ")"},
		{"no user", "", nil, "?@" + host + " (pid " + strconv.Itoa(os.Getpid()) + ")"},
		{"given", "release bot", map[string]string{"USER": "ana"}, "release bot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Default()
			s.Holder = tc.given
			o, err := s.Options(t.Context(), 0, func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if o.Holder != tc.want {
				t.Errorf("holder %q, want %q", o.Holder, tc.want)
			}
		})
	}
}
