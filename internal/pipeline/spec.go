package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Spec is one unit as people write it, on a command line or in a
// workflow's inputs: names, paths and values as text. Options checks and
// parses it into engine Options, the one place either front end does so.
type Spec struct {
	Name string
	// Path is the directory to build; Root confines the build (default:
	// the git work tree around Path, else Path).
	Path, Root string
	// Revision to record; default the git HEAD of Path, else $GITHUB_SHA.
	// When git knows it, its commit time is recorded too, and an older
	// commit than the last applied one is refused unless AllowRollback.
	Revision           string
	AllowRollback      bool
	InventoryNamespace string
	Namespace          string
	DependsOn          []string

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
	AWSKMS               bool

	Validation                  string
	Force, Prune, Wait, Recheck bool
	// MaxPrune (0: no limit) and Protect (kinds) bound what one run may
	// prune; ForcePrune lifts the bound (see prune.Budget).
	MaxPrune   int
	Protect    []string
	ForcePrune bool
	Timeout    time.Duration
	// HealthChecks are Kind/namespace/name, Kind/name (cluster-scoped) or
	// group/Kind/namespace/name.
	HealthChecks   []string
	ServiceAccount string
	// Holder names this run to others waiting for the unit's lock;
	// LockTimeout bounds this run's own wait.
	Holder      string
	LockTimeout time.Duration
}

// DefaultSpec returns the defaults of the CLI and the Action.
func DefaultSpec() Spec {
	o := DefaultOptions()
	return Spec{Validation: string(o.Validation), AWSKMS: o.AWSKMS, Prune: o.Prune, Wait: o.Wait, Timeout: o.Timeout}
}

// Option names a Spec field the way the CLI's flag does, without dashes;
// a front end maps it to its own flag or input.
type Option string

// Options a Spec can get wrong.
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
	OptValidation         Option = "validation"
	OptTimeout            Option = "timeout"
	OptHealthCheck        Option = "health-check"
	OptServiceAccount     Option = "service-account"
	OptLockTimeout        Option = "lock-timeout"
	OptMaxPrune           Option = "max-prune"
	OptProtect            Option = "protect"
	// OptForce and OptAllowRemoteBases cannot be wrong; a Failure names
	// them as its Fix.
	OptForce            Option = "force"
	OptForcePrune       Option = "force-prune"
	OptAllowRemoteBases Option = "allow-remote-bases"
)

// OptionError is a missing or bad option. Its message does not name a
// flag or an input: the front end prefixes its own name for Option.
type OptionError struct {
	Option Option
	Err    error
}

func (e *OptionError) Error() string { return string(e.Option) + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// OptionErrors returns the OptionErrors in err (Spec.Options joins them).
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
// environment (SOPS_AGE_KEY, SOPS_AGE_KEY_FILE, GITHUB_SHA). Every problem
// is an *OptionError; several are joined, so a user fixes them in one go.
func (s Spec) Options(needs Needs, getenv func(string) string) (Options, error) {
	o := DefaultOptions()
	var errs []error
	bad := func(opt Option, err error) {
		if err != nil {
			errs = append(errs, &OptionError{Option: opt, Err: err})
		}
	}

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
		o.Revision = gitHead(o.Dir.Path)
	}
	if o.Revision == "" {
		o.Revision = getenv("GITHUB_SHA")
	}
	if o.Revision != "" && o.Dir.Path != "" {
		o.RevisionTime = commitTime(o.Dir.Path, o.Revision)
	}
	o.AllowRollback, o.Holder, o.LockTimeout = s.AllowRollback, s.Holder, s.LockTimeout
	if s.LockTimeout < 0 {
		bad(OptLockTimeout, fmt.Errorf("want a duration such as 5m, got %s", s.LockTimeout))
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
	o.Build = b

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
	o.AWSKMS = s.AWSKMS
	for _, k := range s.AgeKeys {
		if strings.TrimSpace(k) == "" {
			continue
		}
		ids, err := decrypt.ParseAgeKeys([]byte(k))
		bad(OptAgeKey, err)
		o.AgeIdentities = append(o.AgeIdentities, ids...)
	}
	ids, err := decrypt.LoadAgeIdentities(getenv, s.AgeKeyFiles)
	bad(OptAgeKeyFile, err)
	o.AgeIdentities = append(o.AgeIdentities, ids...)

	o.Validation = result.Validation(s.Validation)
	if !slices.Contains(result.Validations, o.Validation) {
		bad(OptValidation, fmt.Errorf("want %s, got %q", validations(), s.Validation))
	}
	o.Force, o.Prune, o.Wait, o.Recheck = s.Force, s.Prune, s.Wait, s.Recheck
	o.PruneBudget = prune.Budget{Max: s.MaxPrune, Allow: s.ForcePrune}
	if s.MaxPrune < 0 {
		bad(OptMaxPrune, fmt.Errorf("want a count of objects (0: no limit), got %d", s.MaxPrune))
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
	return o, errors.Join(errs...)
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
func commitTime(dir, rev string) time.Time {
	out, err := exec.Command("git", "-C", dir, "show", "-s", "--format=%cI", rev+"^{commit}", "--").Output()
	if err != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
	if err != nil {
		return time.Time{}
	}
	return t
}

// gitHead is the commit checked out in dir's work tree, or "".
func gitHead(dir string) string {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
