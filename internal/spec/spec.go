// Package spec turns a unit as people write it, on a command line or in a
// workflow's inputs, into the engine's options: every value is checked
// here, once, for both front ends, and every problem is named by the
// option it concerns so that each front end can say it in its own words
// (a flag, an input).
package spec

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/kustomize-deploy/kustomize-deploy/internal/azure"
	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/gcp"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/images"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/lock"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/acr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ecr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gar"
	"github.com/kustomize-deploy/kustomize-deploy/internal/tags"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// Unit is one unit as people write it: names, paths and values as text.
// Options checks and parses it into pipeline.Options.
type Unit struct {
	Name string
	// Path is the directory to build; Root confines the build (default:
	// the git work tree around Path, else Path).
	Path, Root string
	// Revision to record; default the git HEAD of Path, else $GITHUB_SHA.
	// When git knows it, its commit time is recorded too, and an older
	// commit than the last applied one is refused unless AllowRollback.
	Revision      string
	AllowRollback bool
	// IncludeTags and ExcludeTags pick a configuration's units, and a
	// unit's HelmReleases, by their tags (package tags).
	IncludeTags, ExcludeTags []string
	InventoryNamespace       string
	Namespace                string
	DependsOn                []string

	TargetNamespace, NamePrefix, NameSuffix string
	// Images are overrides: name=newName:newTag, name=:newTag,
	// name=newName, name@sha256:…, name=newName@sha256:….
	Images []string
	// Labels and Annotations are key=value pairs set on every object.
	Labels, Annotations []string
	AllowRemoteBases    bool

	// Substitute are KEY=VALUE post-build variables; they win over those
	// read from the dotenv files in SubstituteFrom.
	Substitute, SubstituteFrom []string
	// AgeKeys hold age identities (AGE-SECRET-KEY-1…); AgeKeyFiles name
	// files of them. $SOPS_AGE_KEY and $SOPS_AGE_KEY_FILE are read too.
	AgeKeys, AgeKeyFiles []string
	// PGPKeys hold armored PGP private keys; PGPKeyFiles name files of
	// them.
	PGPKeys, PGPKeyFiles []string
	AWSKMS               bool

	// HelmController says the cluster runs Flux's helm-controller:
	// HelmReleases and their sources are applied as they are. Otherwise
	// they are rendered here into their charts' objects. ChartCache keeps
	// fetched charts (default: $XDG_CACHE_HOME, else ~/.cache,
	// /kustomize-deploy/charts).
	HelmController bool
	ChartCache     string
	// RemoveHelmReleaseRecords removes the records of the Helm releases a
	// unit takes over, once it applied (pipeline.Options.RemoveHelmRecords).
	RemoveHelmReleaseRecords bool
	// KubeVersion is the Kubernetes version charts' templates see when
	// there is no cluster to ask (an offline diff): v1.37.2, 1.37. Empty
	// is Helm's default.
	KubeVersion string
	// ResolveImages pins every workload's image to the digest its tag
	// names now (pipeline.Options.ResolveImages), with the Docker
	// credentials of the environment ($DOCKER_CONFIG, ~/.docker); a
	// configuration's run adds its OCI Secrets (units.Open).
	ResolveImages bool
	// Fold are JSON pointers a pull request's diff folds besides Helm's
	// chart labels, app versions and checksums (see diff.Noise).
	Fold []string

	Validation string
	// SchemaDir is a directory of JSON schemas the offline schema check
	// reads custom resources' from (see validate.NewKnown).
	SchemaDir                   string
	Force, Prune, Wait, Recheck bool
	// MaxPrune (0: no limit) and Protect (kinds) bound what one run may
	// prune, MaxCollect (0: no limit) how many units that left a
	// configuration it may garbage-collect; ForcePrune lifts the bounds
	// (see prune.Budget).
	MaxPrune   int
	Protect    []string
	MaxCollect int
	ForcePrune bool
	Timeout    time.Duration
	// HealthChecks are Kind/namespace/name, Kind/name (cluster-scoped) or
	// group/Kind/namespace/name.
	HealthChecks   []string
	ServiceAccount string
	// Holder names this run to others waiting for the unit's lock
	// (default: the workflow run's URL in GitHub Actions, else user@host
	// and process id); LockTimeout bounds this run's own wait.
	Holder      string
	LockTimeout time.Duration
	// WaitForDependencies waits that long at most for dependencies
	// outside the run (another job's units) to be Ready at this revision;
	// 0 checks once that they are Ready.
	WaitForDependencies time.Duration
}

// Default returns the defaults of the CLI and the Action: the engine's
// (pipeline.DefaultOptions) and the lock's wait.
func Default() Unit {
	o := pipeline.DefaultOptions()
	return Unit{Validation: string(o.Validation), AWSKMS: o.Decryption.AWSKMS, Prune: o.Prune, Wait: o.Wait, Timeout: o.Timeout, LockTimeout: lock.DefaultWait,
		MaxCollect: prune.DefaultMaxUnits}
}

// Option names a Unit field the way the CLI's flag does, without dashes;
// a front end maps it to its own flag or input.
type Option string

// Options a Unit can get wrong.
const (
	OptName               Option = "name"
	OptPath               Option = "path"
	OptRoot               Option = "root"
	OptNamespace          Option = "namespace"
	OptInventoryNamespace Option = "inventory-namespace"
	OptDependsOn          Option = "depends-on"
	OptTargetNamespace    Option = "target-namespace"
	OptImage              Option = "image"
	OptLabel              Option = "label"
	OptAnnotation         Option = "annotation"
	OptSubstitute         Option = "substitute"
	OptSubstituteFrom     Option = "substitute-from"
	OptAgeKey             Option = "sops-age-key"
	OptAgeKeyFile         Option = "sops-age-key-file"
	OptPGPKey             Option = "sops-pgp-key"
	OptPGPKeyFile         Option = "sops-pgp-key-file"
	OptValidation         Option = "validation"
	OptSchemaDir          Option = "schema-dir"
	OptTimeout            Option = "timeout"
	OptHealthCheck        Option = "health-check"
	OptServiceAccount     Option = "service-account"
	OptLockTimeout        Option = "lock-timeout"
	OptWaitForDeps        Option = "wait-for-dependencies"
	OptMaxPrune           Option = "max-prune"
	OptProtect            Option = "protect"
	OptMaxCollect         Option = "max-collect"
	OptKubeVersion        Option = "kube-version"
	OptFold               Option = "fold"
	// OptTags is the include and exclude tags (a front end may name them
	// apart).
	OptTags Option = "include-tag, exclude-tag"
)

// OptionError is a missing or bad option. Its message does not name a
// flag or an input: the front end prefixes its own name for Option.
type OptionError struct {
	Option Option
	Err    error
}

func (e *OptionError) Error() string { return string(e.Option) + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// OptionErrors returns the OptionErrors in err (Unit.Options joins them).
func OptionErrors(err error) []*OptionError {
	var oe *OptionError
	if errors.As(err, &oe) && oe == err {
		return []*OptionError{oe}
	}
	var out []*OptionError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, OptionErrors(e)...)
		}
	}
	return out
}

// Needs says which options a command cannot do without.
type Needs int

// What commands need.
const (
	// NeedName: the command acts on a unit's inventory (diff, apply,
	// delete).
	NeedName Needs = 1 << iota
	// NeedPath: the command builds the unit (build, diff, apply).
	NeedPath
)

// Options checks s and turns it into engine Options. getenv reads the
// environment (SOPS_AGE_KEY, SOPS_AGE_KEY_FILE, VAULT_TOKEN, VAULT_ADDR, GITHUB_SHA, and what names
// the run to others: GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID,
// USER); git, when Path is in a work tree, gives the revision and when it
// was committed. Every problem is an *OptionError; several are joined, so
// a user fixes them in one go.
func (s Unit) Options(ctx context.Context, needs Needs, getenv func(string) string) (pipeline.Options, error) {
	o := pipeline.DefaultOptions()
	var errs []error
	bad := func(opt Option, err error) {
		if err != nil {
			errs = append(errs, &OptionError{Option: opt, Err: err})
		}
	}
	s.unit(ctx, needs, getenv, &o, bad)
	o.Build = s.build(bad)
	s.values(getenv, &o, bad)
	s.apply(&o, bad)
	if o.Charts != nil && o.Dir.Root != "" {
		// A GitRepository whose URL is the origin's is this repository:
		// charts kept in it are read from the checkout.
		o.Charts.Checkout = &helm.Checkout{Remote: checkout.Origin(ctx, o.Dir.Root)}
	}
	return o, errors.Join(errs...)
}

// problem records a problem with an option; nil is none.
type problem func(opt Option, err error)

// unit sets which unit it is, what it builds, the revision, its lock and
// its place in the cluster.
func (s Unit) unit(ctx context.Context, needs Needs, getenv func(string) string, o *pipeline.Options, bad problem) {
	o.Name = s.Name
	if s.Name != "" || needs&NeedName != 0 {
		bad(OptName, inventory.ValidateName(s.Name))
	}
	if s.Path != "" || needs&NeedPath != 0 {
		dir, err := paths.Resolve(s.Path, s.Root)
		var pe *paths.Error
		if errors.As(err, &pe) && pe.Which == "root" {
			bad(OptRoot, err)
		} else {
			bad(OptPath, err)
		}
		o.Dir = dir
	}
	o.Revision = s.Revision
	if o.Revision == "" && o.Dir.Path != "" {
		o.Revision = gitHead(ctx, o.Dir.Path)
	}
	if o.Revision == "" {
		o.Revision = getenv("GITHUB_SHA")
	}
	if o.Revision != "" && o.Dir.Path != "" {
		o.RevisionTime = commitTime(ctx, o.Dir.Path, o.Revision)
	}
	o.AllowRollback, o.Holder, o.LockTimeout = s.AllowRollback, s.Holder, s.LockTimeout
	if o.Holder == "" {
		o.Holder = holder(getenv)
	}
	o.RunBy, o.RunURL = or(getenv("GITHUB_ACTOR"), getenv("USER")), runURL(getenv)
	o.IncludeTags, o.ExcludeTags = s.IncludeTags, s.ExcludeTags
	for _, t := range slices.Concat(s.IncludeTags, s.ExcludeTags) {
		if parsed, err := tags.Parse(t); err != nil || len(parsed) != 1 {
			bad(OptTags, fmt.Errorf("tag %q: want letters, digits, '.', '_' and '-'", t))
		}
	}
	if s.LockTimeout < 0 {
		bad(OptLockTimeout, fmt.Errorf("want a duration such as 5m, got %s", s.LockTimeout))
	}
	o.WaitForDependencies = s.WaitForDependencies
	if s.WaitForDependencies < 0 {
		bad(OptWaitForDeps, fmt.Errorf("want a duration such as 10m (0: check once), got %s", s.WaitForDependencies))
	}
	o.InventoryNamespace, o.Namespace = s.InventoryNamespace, s.Namespace
	bad(OptInventoryNamespace, build.ValidateNamespace(s.InventoryNamespace))
	bad(OptNamespace, build.ValidateNamespace(s.Namespace))
	for _, d := range s.DependsOn {
		if d = strings.TrimSpace(d); d != "" {
			bad(OptDependsOn, inventory.ValidateName(d))
			o.DependsOn = append(o.DependsOn, d)
		}
	}
}

// build is how kustomize builds the unit.
func (s Unit) build(bad problem) build.Options {
	b := build.Options{TargetNamespace: s.TargetNamespace, NamePrefix: s.NamePrefix, NameSuffix: s.NameSuffix, AllowRemoteBases: s.AllowRemoteBases}
	bad(OptTargetNamespace, build.ValidateNamespace(s.TargetNamespace))
	for _, v := range s.Images {
		img, err := build.ParseImage(v)
		bad(OptImage, err)
		b.Images = append(b.Images, img)
	}
	var err error
	b.Labels, err = keyValues(s.Labels)
	if err == nil {
		err = build.ValidateLabels(b.Labels)
	}
	bad(OptLabel, err)
	b.Annotations, err = keyValues(s.Annotations)
	if err == nil {
		err = build.ValidateAnnotations(b.Annotations)
	}
	bad(OptAnnotation, err)
	return b
}

// values sets the post-build variables and the keys that decrypt.
func (s Unit) values(getenv func(string) string, o *pipeline.Options, bad problem) {
	o.Substitute = map[string]string{}
	for _, file := range s.SubstituteFrom {
		vars, err := build.ParseDotenv(file)
		bad(OptSubstituteFrom, err)
		maps.Copy(o.Substitute, vars)
	}
	for _, v := range s.Substitute {
		k, val, err := build.ParseKeyValue(v)
		bad(OptSubstitute, err)
		if err == nil {
			o.Substitute[k] = val
		}
	}
	o.Decryption.AWSKMS = s.AWSKMS
	o.Decryption.VaultToken, o.Decryption.VaultAddress = getenv("VAULT_TOKEN"), getenv("VAULT_ADDR")
	o.Decryption.Getenv = getenv
	keys := func(opt Option, values []string, parse func([]byte) ([]string, error)) {
		for _, k := range values {
			if strings.TrimSpace(k) == "" {
				continue
			}
			got, err := parse([]byte(k))
			bad(opt, err)
			o.Decryption.Keys = append(o.Decryption.Keys, got...)
		}
	}
	keys(OptAgeKey, s.AgeKeys, decrypt.ParseAgeKeys)
	ids, err := decrypt.LoadAgeIdentities(getenv, s.AgeKeyFiles)
	bad(OptAgeKeyFile, err)
	o.Decryption.Keys = append(o.Decryption.Keys, ids...)
	keys(OptPGPKey, s.PGPKeys, decrypt.ParsePGPKeys)
	pgp, err := decrypt.LoadPGPKeys(s.PGPKeyFiles)
	bad(OptPGPKeyFile, err)
	o.Decryption.Keys = append(o.Decryption.Keys, pgp...)
	if !s.HelmController {
		gcpLogin := func(ctx context.Context, host string, envOnly bool) (string, string, error) {
			return gar.Login(ctx, host, gar.Options{Credentials: gcp.Options{Getenv: getenv}, EnvironmentOnly: envOnly})
		}
		azureLogin := func(ctx context.Context, host string, envOnly bool) (string, string, error) {
			return acr.Login(ctx, host, acr.Options{Credentials: azure.Options{Getenv: getenv}, EnvironmentOnly: envOnly})
		}
		o.Charts = &helm.Options{Fetcher: &helm.Fetcher{CacheDir: or(s.ChartCache, chartCache(getenv)), AWS: ecr.Login, GCP: gcpLogin, Azure: azureLogin}, KubeVersion: s.KubeVersion}
	}
	bad(OptKubeVersion, helm.ValidateKubeVersion(s.KubeVersion))
}

// chartCache is where fetched charts are kept unless told otherwise:
// the user's cache directory, as XDG says ($XDG_CACHE_HOME, else
// ~/.cache); none without a home.
func chartCache(getenv func(string) string) string {
	dir := getenv("XDG_CACHE_HOME")
	if dir == "" {
		if home := getenv("HOME"); home != "" {
			dir = filepath.Join(home, ".cache")
		}
	}
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "kustomize-deploy", "charts")
}

// apply sets how the unit is validated, applied, pruned and waited for.
func (s Unit) apply(o *pipeline.Options, bad problem) {
	o.Validation = result.Validation(s.Validation)
	if !slices.Contains(result.Validations, o.Validation) {
		bad(OptValidation, fmt.Errorf("want %s, got %q", validations(), s.Validation))
	}
	dir := s.SchemaDir
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	known, err := validate.NewKnown(dir)
	bad(OptSchemaDir, err)
	o.Schemas = known
	o.Force, o.Prune, o.Wait, o.Recheck = s.Force, s.Prune, s.Wait, s.Recheck
	o.RemoveHelmRecords = s.RemoveHelmReleaseRecords
	o.PruneBudget = prune.Budget{Max: s.MaxPrune, MaxUnits: s.MaxCollect, Allow: s.ForcePrune}
	if s.MaxPrune < 0 {
		bad(OptMaxPrune, fmt.Errorf("want a count of objects (0: no limit), got %d", s.MaxPrune))
	}
	if s.MaxCollect < 0 {
		bad(OptMaxCollect, fmt.Errorf("want a count of units (0: no limit), got %d", s.MaxCollect))
	}
	for _, k := range s.Protect {
		if k = strings.TrimSpace(k); k != "" {
			o.PruneBudget.Protect = append(o.PruneBudget.Protect, k)
		}
	}
	bad(OptProtect, prune.ValidateProtect(o.PruneBudget.Protect))
	o.Timeout = s.Timeout
	if s.Timeout <= 0 {
		bad(OptTimeout, fmt.Errorf("want a positive duration such as 5m or 90s, got %s", s.Timeout))
	}
	for _, hc := range s.HealthChecks {
		id, err := parseObjectRef(hc)
		bad(OptHealthCheck, err)
		o.HealthChecks = append(o.HealthChecks, id)
	}
	o.ServiceAccount = s.ServiceAccount
	if s.ResolveImages {
		o.ResolveImages = images.Registry{Keychain: authn.DefaultKeychain}
	}
	for _, p := range s.Fold {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		bad(OptFold, diff.ValidatePointer(p))
		o.Noise.Pointers = append(o.Noise.Pointers, p)
	}
}

func validations() string {
	names := make([]string, len(result.Validations))
	for i, v := range result.Validations {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

// keyValues parses key=value pairs.
func keyValues(items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, s := range items {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want key=value", s)
		}
		m[k] = v
	}
	return m, nil
}

// parseObjectRef reads Kind/namespace/name, Kind/name (cluster-scoped) or
// group/Kind/namespace/name.
func parseObjectRef(s string) (object.ID, error) {
	parts := strings.Split(s, "/")
	for _, p := range parts {
		if p == "" {
			parts = nil
		}
	}
	switch len(parts) {
	case 2:
		return object.ID{Group: coreGroup(parts[0]), Kind: parts[0], Name: parts[1]}, nil
	case 3:
		return object.ID{Group: coreGroup(parts[0]), Kind: parts[0], Namespace: parts[1], Name: parts[2]}, nil
	case 4:
		return object.ID{Group: parts[0], Kind: parts[1], Namespace: parts[2], Name: parts[3]}, nil
	}
	return object.ID{}, fmt.Errorf("%q: want Kind/namespace/name, Kind/name or group/Kind/namespace/name", s)
}

// coreGroup knows the groups of the workload kinds people health-check most.
func coreGroup(kind string) string {
	switch kind {
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet":
		return "apps"
	case "Job", "CronJob":
		return "batch"
	}
	return ""
}

// commitTime is when git in dir's work tree says rev was committed; zero
// when git does not know rev (a revision given by hand, no git).
func commitTime(ctx context.Context, dir, rev string) time.Time {
	out, err := checkout.Git(ctx, dir, "show", "-s", "--format=%cI", rev+"^{commit}", "--")
	if err != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, out)
	if err != nil {
		return time.Time{}
	}
	return t
}

// gitHead is the commit checked out in dir's work tree, or "".
func gitHead(ctx context.Context, dir string) string {
	out, err := checkout.Git(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return ""
	}
	return out
}

// holder names this run to another that waits for a unit's lock: the
// workflow run when inside GitHub Actions, else user@host (pid N).
func holder(getenv func(string) string) string {
	if url := runURL(getenv); url != "" {
		return url
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s (pid %d)", or(getenv("USER"), "?"), host, os.Getpid())
}

// runURL is the GitHub Actions run the process is part of, or "".
func runURL(getenv func(string) string) string {
	server, repo, id := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID")
	if server != "" && repo != "" && id != "" {
		return fmt.Sprintf("%s/%s/actions/runs/%s", server, repo, id)
	}
	return ""
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
