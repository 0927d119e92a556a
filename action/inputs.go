// Package action translates the GitHub Actions world (inputs, the event,
// outputs, masks, the job summary, PR comments, commit statuses and drift
// issues) into engine options and back. The engine never imports it;
// everything it reads from the runner comes through Env, so tests drive it
// with a map and a buffer.
package action

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
	"github.com/kustomize-deploy/kustomize-deploy/internal/units"
	"github.com/sethvargo/go-githubactions"
)

// ModeAuto, the mode input's default, picks the mode from the event (see
// resolveMode); every other value is a result.Mode, but ModePublish and
// ModeRollback.
const ModeAuto = "auto"

// ModeTest checks a whole configuration without a cluster, as
// `kustomize-deploy test --config` does: every unit rendered offline at
// the checkout, pass or fail per Kustomization and HelmRelease.
const ModeTest = "test"

// ModeRollback applies a revision of the unit's history again (input
// to-revision; see pipeline.Rollback): an apply of that revision's commit.
const ModeRollback = "rollback"

// Inputs are the action's inputs, parsed and defaulted (see action.yml).
type Inputs struct {
	Path, Name, Mode string
	// ToRevision, with mode rollback, is the revision of the unit's
	// history to apply again; 0 means the last ready one before the
	// current.
	ToRevision int
	// Config is a file or directory of Flux Kustomizations: every one is
	// a unit of the run. Units then limits the run to these names.
	Config string
	Units  []string
	// IncludeTags, ExcludeTags and AbortOnError pick and stop the units
	// of a configuration (units.Spec).
	IncludeTags, ExcludeTags []string
	AbortOnError             bool
	AllUnits                 bool // a PR's diff renders every unit, not only those its change reaches
	Parallel                 int
	KubeconfigSecrets        map[string]string           // Secret name → file, or $VARIABLE
	DecryptionSecrets        map[string]string           // Secret name → file of age identities, or $VARIABLE holding them
	Sources                  map[config.SourceRef]string // a source that is another repository → its checkout, relative to the workspace
	FluxControllers          bool                        // install Flux's controllers a unit's build emits
	// DefaultServiceAccount and NoCrossNamespaceRefs set Flux's
	// multi-tenancy lockdown over the configuration's (nil: not given).
	DefaultServiceAccount            *string
	NoCrossNamespaceRefs             *bool
	GitSecrets                       map[string]string // Secret name → file of Git credentials, or $VARIABLE holding them
	OCISecrets                       map[string]string // Secret name → Docker config (or dockerconfigjson Secret) file, or $VARIABLE holding it
	Secrets                          map[string]string // Secret name → file of a notification Provider's Secret, or $VARIABLE holding it
	FetchSources                     bool              // fetch GitRepositories of other repositories, and pull OCIRepositories, not in Sources
	AllowRollback                    bool
	LockTimeout                      time.Duration
	WaitForDependencies              time.Duration
	Prune, Wait, Force, Recheck      bool
	Timeout                          time.Duration
	QPS                              float32
	Burst                            int
	Validation                       result.Validation // "" means server with a cluster, client without
	DependsOn                        []string
	TargetNamespace, Namespace       string
	Images, Substitute               []string
	ServiceAccount                   string
	Kubeconfig, Context, InventoryNS string
	ClusterName                      string       // input cluster (formerly environment): names the cluster in the comment marker and status context
	Cluster                          spec.Cluster // eks-cluster, gke-cluster, aks-cluster: no kubeconfig
	SopsAgeKey, SopsPGPKey           string
	HelmController                   bool     // apply HelmReleases as they are
	ChartCache                       string   // where fetched charts are kept
	HelmRecords                      bool     // remove the records of Helm releases taken over
	KubeVersion                      string   // what charts see of Kubernetes offline
	Fold                             []string // JSON pointers the PR comment folds as noise
	ResolveImages                    bool     // pin images to their digests at render time
	SchemaDir                        string   // JSON schemas of custom resources, for the offline check
	GitHubToken                      string
	Report                           string // mode publish: the report file (or a directory of them) to post
	Comment                          string // auto, always, never
	Status                           bool
	DriftAction                      string // report, correct
	FailOnDrift                      bool
	// MaxPrune and Protect bound what a run may prune, MaxCollect how
	// many units that left a configuration it may garbage-collect (see
	// prune.Budget); a PR labelled AllowPruneLabel (its merge, for a
	// push) or ForcePrune lifts the bounds.
	MaxPrune        int
	Protect         []string
	MaxCollect      int
	AllowPruneLabel string
	ForcePrune      bool
	DriftIssues     bool // one GitHub issue per drifted unit
}

// readInputs parses every input, collecting all problems into one error
// that names each input, so a user fixes the workflow in one go.
func readInputs(gha *githubactions.Action) (Inputs, error) {
	var errs []string
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("input '%s': %s", name, fmt.Sprintf(format, args...)))
	}
	boolean := func(name string, def bool) bool {
		v := gha.GetInput(name)
		if v == "" {
			return def
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(name, "want true or false, got %q", v)
		}
		return b
	}
	oneOf := func(name, def string, allowed ...string) string {
		v := gha.GetInput(name)
		if v == "" {
			return def
		}
		for _, a := range allowed {
			if v == a {
				return v
			}
		}
		bad(name, "want one of %s, got %q", strings.Join(allowed, ", "), v)
		return def
	}
	in := Inputs{
		Path:            gha.GetInput("path"),
		Name:            gha.GetInput("name"),
		Mode:            oneOf("mode", ModeAuto, ModeAuto, string(result.ModeDiff), string(result.ModeApply), string(result.ModeDrift), string(result.ModeDelete), ModePublish, ModeRollback, ModeTest),
		Report:          gha.GetInput("report"),
		Prune:           boolean("prune", spec.Default().Prune),
		Wait:            boolean("wait", spec.Default().Wait),
		Force:           boolean("force", false),
		Recheck:         boolean("recheck", false),
		AllowRollback:   boolean("allow-rollback", false),
		Config:          gha.GetInput("config"),
		Validation:      result.Validation(oneOf("validation", "", string(result.ValidationClient), string(result.ValidationServer), string(result.ValidationNone))),
		DependsOn:       splitList(gha.GetInput("depends-on")),
		TargetNamespace: gha.GetInput("target-namespace"),
		Namespace:       gha.GetInput("namespace"),
		Images:          lines(gha.GetInput("images")),
		Substitute:      lines(gha.GetInput("substitute")),
		ServiceAccount:  gha.GetInput("service-account"),
		Kubeconfig:      gha.GetInput("kubeconfig"),
		Context:         gha.GetInput("context"),
		ClusterName:     gha.GetInput("cluster"),
		Cluster: spec.Cluster{
			EKS: gha.GetInput("eks-cluster"), EKSRegion: gha.GetInput("eks-region"),
			GKE: gha.GetInput("gke-cluster"), AKS: gha.GetInput("aks-cluster"),
		},
		InventoryNS:     gha.GetInput("inventory-namespace"),
		SopsAgeKey:      gha.GetInput("sops-age-key"),
		SopsPGPKey:      gha.GetInput("sops-pgp-key"),
		HelmController:  boolean("helm-controller", false),
		FetchSources:    boolean("fetch-sources", true),
		ChartCache:      gha.GetInput("chart-cache"),
		HelmRecords:     boolean("remove-helm-release-records", false),
		KubeVersion:     gha.GetInput("kube-version"),
		Fold:            lines(gha.GetInput("fold")),
		ResolveImages:   boolean("resolve-images", false),
		SchemaDir:       gha.GetInput("schema-dir"),
		GitHubToken:     gha.GetInput("github-token"),
		Comment:         oneOf("comment", "auto", "auto", "always", "never"),
		Status:          boolean("status", true),
		DriftAction:     oneOf("drift-action", "correct", "report", "correct"),
		FailOnDrift:     boolean("fail-on-drift", false),
		DriftIssues:     boolean("drift-issues", true),
		Protect:         prune.DefaultProtect,
		AllowPruneLabel: "allow-prune",
		ForcePrune:      boolean("force-prune", false),
	}
	if in.Mode == ModePublish {
		publishInputs(gha, in, bad)
		if len(errs) > 0 {
			return in, fmt.Errorf("%s", strings.Join(errs, "; "))
		}
		return in, nil
	}
	if in.Report != "" {
		bad("report", "only with mode publish")
	}
	if v := gha.GetInput("to-revision"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case in.Mode != ModeRollback:
			bad("to-revision", "only with mode rollback")
		case err != nil || n < 1:
			bad("to-revision", "want a revision number of the unit's history (see kustomize-deploy history), got %q", v)
		default:
			in.ToRevision = n
		}
	}
	clusterInputs(in, bad)
	switch v := strings.TrimSpace(gha.GetInput("protect")); v {
	case "":
	case "none":
		in.Protect = nil
	default:
		in.Protect = splitList(v)
	}
	if v := strings.TrimSpace(gha.GetInput("allow-prune-label")); v != "" {
		in.AllowPruneLabel = v
	}
	// Values are parsed here and checked where the CLI's flags are too
	// (spec.Unit.Options), which names the input of a bad one.
	def := spec.Default()
	if v := gha.GetInput("max-prune"); v != "" {
		if n, err := strconv.Atoi(v); err != nil {
			bad("max-prune", "want a count of objects (0: no limit), got %q", v)
		} else {
			in.MaxPrune = n
		}
	}
	in.MaxCollect = def.MaxCollect
	if v := gha.GetInput("max-collect"); v != "" {
		if n, err := strconv.Atoi(v); err != nil {
			bad("max-collect", "want a count of units (0: no limit), got %q", v)
		} else {
			in.MaxCollect = n
		}
	}
	in.Timeout = def.Timeout
	if v := gha.GetInput("timeout"); v != "" {
		if d, err := time.ParseDuration(v); err != nil {
			bad("timeout", "want a duration such as 5m or 90s, got %q", v)
		} else {
			in.Timeout = d
		}
	}
	in.QPS, in.Burst = kube.DefaultQPS, kube.DefaultBurst
	if v := gha.GetInput("kube-api-qps"); v != "" {
		if q, err := strconv.ParseFloat(v, 32); err != nil || q <= 0 {
			bad("kube-api-qps", "want a positive number, got %q", v)
		} else {
			in.QPS = float32(q)
		}
	}
	if v := gha.GetInput("kube-api-burst"); v != "" {
		if b, err := strconv.Atoi(v); err != nil || b <= 0 {
			bad("kube-api-burst", "want a positive whole number, got %q", v)
		} else {
			in.Burst = b
		}
	}
	in.Parallel = units.DefaultParallel
	if v := gha.GetInput("parallel"); v != "" {
		if p, err := strconv.Atoi(v); err != nil || p < 1 {
			bad("parallel", "want a whole number of at least 1, got %q", v)
		} else {
			in.Parallel = p
		}
	}
	in.IncludeTags, in.ExcludeTags = splitList(gha.GetInput("include-tags")), splitList(gha.GetInput("exclude-tags"))
	in.AbortOnError = boolean("abort-on-error", false)
	if in.Config == "" && in.AbortOnError {
		bad("abort-on-error", "only with 'config': it stops the units of a configuration")
	}
	in.AllUnits = boolean("all-units", false)
	if in.Config == "" && in.AllUnits {
		bad("all-units", "only with 'config': it renders every unit of a configuration")
	}
	in.LockTimeout = def.LockTimeout
	if v := gha.GetInput("lock-timeout"); v != "" {
		if d, err := time.ParseDuration(v); err != nil {
			bad("lock-timeout", "want a duration such as 5m, got %q", v)
		} else {
			in.LockTimeout = d
		}
	}
	if v := gha.GetInput("wait-for-dependencies"); v != "" {
		if d, err := time.ParseDuration(v); err != nil {
			bad("wait-for-dependencies", "want a duration such as 10m (0: check once), got %q", v)
		} else {
			in.WaitForDependencies = d
		}
	}
	in.KubeconfigSecrets = namedLines(gha, "kubeconfig-secrets", bad)
	in.DecryptionSecrets = namedLines(gha, "decryption-secrets", bad)
	in.Sources = sourceLines(gha.GetInput("sources"), bad)
	in.FluxControllers = boolean("flux-controllers", false)
	if v := gha.GetInput("default-service-account"); v != "" {
		in.DefaultServiceAccount = &v
	}
	if v := gha.GetInput("no-cross-namespace-refs"); v != "" {
		b := boolean("no-cross-namespace-refs", false)
		in.NoCrossNamespaceRefs = &b
	}
	in.GitSecrets = namedLines(gha, "git-secrets", bad)
	in.OCISecrets = namedLines(gha, "oci-secrets", bad)
	in.Secrets = namedLines(gha, "secrets", bad)
	if in.Config != "" {
		configInputs(gha, &in, bad)
		if len(errs) > 0 {
			return in, fmt.Errorf("%s", strings.Join(errs, "; "))
		}
		return in, nil
	}
	if len(in.KubeconfigSecrets) > 0 {
		bad("kubeconfig-secrets", "only with 'config': it stands in for the kubeConfig Secrets Flux Kustomizations name")
	}
	if len(in.DecryptionSecrets) > 0 {
		bad("decryption-secrets", "only with 'config': it stands in for the decryption Secrets Flux Kustomizations name (use sops-age-key or sops-pgp-key for a unit of its own)")
	}
	if in.FluxControllers {
		bad("flux-controllers", "only with 'config': a unit of its own applies every object of its build")
	}
	if in.DefaultServiceAccount != nil {
		bad("default-service-account", "only with 'config': it applies a configuration's Kustomizations and HelmReleases without serviceAccountName as that account (a unit of its own takes service-account)")
	}
	if in.NoCrossNamespaceRefs != nil {
		bad("no-cross-namespace-refs", "only with 'config': it refuses a configuration's sourceRefs and charts in another namespace")
	}
	if len(in.Sources) > 0 {
		bad("sources", "only with 'config': it maps the sources Flux Kustomizations name (a unit of its own builds path, from this checkout)")
	}
	if len(in.GitSecrets) > 0 {
		bad("git-secrets", "only with 'config': it stands in for the Secrets of the GitRepositories Flux Kustomizations name")
	}
	if len(in.OCISecrets) > 0 {
		bad("oci-secrets", "only with 'config': it stands in for the Secrets of the OCIRepositories Flux Kustomizations name")
	}
	if len(in.Secrets) > 0 {
		bad("secrets", "only with 'config': it stands in for the Secrets of a configuration's notification Providers")
	}
	if in.Mode == ModeTest {
		bad("mode", "test checks a configuration of Flux Kustomizations: set 'config'")
	}
	if in.Path == "" && in.Mode != string(result.ModeDelete) {
		bad("path", "required (or 'config'): the directory to deploy, relative to the repository")
	}
	readClusterName(gha, &in, bad)
	if in.Name == "" {
		in.Name = nameFromPath(in.Path)
		if in.Name == "" {
			bad("name", "required when path gives no usable name")
		}
	}
	if len(errs) > 0 {
		return in, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return in, nil
}

// readClusterName reads input cluster, and environment, its former name (the
// runner warns of its deprecationMessage): one or the other, or both the
// same.
func readClusterName(gha *githubactions.Action, in *Inputs, bad func(name, format string, args ...any)) {
	input := "cluster"
	switch old := gha.GetInput("environment"); {
	case old == "":
	case in.ClusterName == "":
		in.ClusterName, input = old, "environment"
	case old != in.ClusterName:
		bad("environment", "its new name 'cluster' is set too, to %q: set only cluster", in.ClusterName)
	}
	if in.ClusterName != "" && !clusterNameRE.MatchString(in.ClusterName) {
		bad(input, "want letters, digits and . _ - / : @ (at most 100), got %q", in.ClusterName)
	}
}

// clusterInputs checks the inputs that name a managed cluster: one at
// most, not with a kubeconfig, each well formed.
func clusterInputs(in Inputs, bad func(name, format string, args ...any)) {
	set := in.Cluster.Set()
	for _, o := range set[min(1, len(set)):] {
		bad(string(o), "'%s' is set too: the cluster is one or the other", set[0])
	}
	if len(set) > 0 && in.Kubeconfig != "" {
		bad(string(set[0]), "'kubeconfig' is set too: the cluster is one or the other")
	}
	for _, oe := range spec.OptionErrors(in.Cluster.Check()) {
		bad(string(oe.Option), "%v", oe.Err)
	}
}

// publishInputs checks the inputs of mode publish: the report to post;
// it builds nothing and reaches no cluster, so the inputs that say what
// to build or where to deploy are refused rather than ignored.
func publishInputs(gha *githubactions.Action, in Inputs, bad func(name, format string, args ...any)) {
	if in.Report == "" {
		bad("report", "required with mode publish: the report file of the pull request run, downloaded with actions/download-artifact")
	}
	for _, name := range []string{"path", "config", "kubeconfig", "eks-cluster", "gke-cluster", "aks-cluster", "sops-age-key", "sops-pgp-key"} {
		if gha.GetInput(name) != "" {
			bad(name, "not with mode publish: it posts a pull request run's report and builds nothing")
		}
	}
}

// namedLines reads an input of NAME=FILE or NAME=$VARIABLE lines, each
// standing in for a Secret that Kustomizations name.
func namedLines(gha *githubactions.Action, input string, bad func(name, format string, args ...any)) map[string]string {
	out := map[string]string{}
	for _, l := range lines(gha.GetInput(input)) {
		name, value, ok := strings.Cut(l, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || value == "" {
			// Not quoted: a line may be a credential pasted by mistake.
			bad(input, "want NAME=FILE or NAME=$VARIABLE on each line, a line of %d characters is neither", len(l))
			continue
		}
		out[name] = value
	}
	return out
}

// sourceLines reads the sources input: KIND/NAMESPACE/NAME=DIR lines,
// each a source that is another repository mapped to a directory the
// workflow checked out (actions/checkout with path:).
func sourceLines(v string, bad func(name, format string, args ...any)) map[config.SourceRef]string {
	out := map[config.SourceRef]string{}
	for _, l := range lines(v) {
		ref, dir, err := units.ParseSource(l)
		if err != nil {
			bad("sources", "%v", err)
			continue
		}
		if _, dup := out[ref]; dup {
			bad("sources", "%s is mapped twice", ref)
		}
		out[ref] = dir
	}
	return out
}

// configInputs checks the inputs of a run of a configuration: each
// Kustomization sets its own path, dependencies, namespace, pruning and
// waiting, so the inputs that would set them for every unit are refused
// rather than silently ignored. The name input picks units.
func configInputs(gha *githubactions.Action, in *Inputs, bad func(name, format string, args ...any)) {
	in.Units, in.Name = splitList(in.Name), ""
	for _, name := range []string{"path", "depends-on", "target-namespace", "service-account"} {
		if gha.GetInput(name) != "" {
			bad(name, "not with 'config': each Kustomization sets its own (spec.%s)", specField[name])
		}
	}
	// These have defaults (action.yml): only another value is refused.
	def := spec.Default()
	for _, d := range []struct {
		name      string
		isDefault bool
	}{{"prune", in.Prune == def.Prune}, {"wait", in.Wait == def.Wait}, {"timeout", in.Timeout == def.Timeout}} {
		if gha.GetInput(d.name) != "" && !d.isDefault {
			bad(d.name, "not with 'config': each Kustomization sets its own (spec.%s)", d.name)
		}
	}
	if in.Mode == string(result.ModeDelete) {
		bad("mode", "delete is not run over a configuration: remove the Kustomization from it and apply, and the unit is deleted per its spec.deletionPolicy")
	}
	if in.Mode == ModeRollback {
		bad("mode", "rollback is of one unit, named with name and path: not with 'config'")
	}
}

// specField is the Kustomization field that stands for an input.
var specField = map[string]string{"path": "path", "depends-on": "dependsOn", "target-namespace": "targetNamespace", "service-account": "serviceAccountName"}

var (
	nonName       = regexp.MustCompile(`[^a-z0-9]+`)
	clusterNameRE = regexp.MustCompile(`^[A-Za-z0-9._/:@-]{1,100}$`)
	notLabel      = regexp.MustCompile(`[^A-Za-z0-9._/:@-]+`)
)

// nameFromPath derives a unit name: "./clusters/prod/apps" → "clusters-prod-apps".
func nameFromPath(p string) string {
	p = strings.Trim(path.Clean(strings.ReplaceAll(p, "\\", "/")), "./")
	n := strings.Trim(nonName.ReplaceAllString(strings.ToLower(p), "-"), "-")
	if len(n) > 63 {
		n = strings.Trim(n[len(n)-63:], "-")
	}
	return n
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == ' ' }) {
		out = append(out, f)
	}
	return out
}
