package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/notify"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/report"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gitsource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
	"github.com/kustomize-deploy/kustomize-deploy/internal/units"
)

// configFlags are the flags of a run of a configuration of Flux
// Kustomizations (--config).
type configFlags struct {
	path        string
	parallel    int
	verbose     bool
	decryption  []string // NAME=FILE
	kubeconfigs []string // NAME=FILE
	sources     []string // KIND/NAMESPACE/NAME=DIR
	controllers bool
	gitSecrets  []string // NAME=FILE
	ociSecrets  []string // NAME=FILE
	secrets     []string // NAME=FILE
	fetch       bool
	// base is diff's --base and offline its --offline (they apply to a
	// single unit too).
	base    string
	offline bool
	// allUnits is diff's --all-units.
	allUnits bool
	// includeTags, excludeTags and abortOnError pick and stop the units
	// of a configuration.
	includeTags, excludeTags []string
	abortOnError             bool
	// defaultAccount and noCrossRefs set Flux's lockdown (nil: the
	// configuration's).
	defaultAccount optionalString
	noCrossRefs    optionalBool
}

// optionalString is a string flag that tells "not given" (nil) from
// given empty.
type optionalString struct{ v *string }

func (o *optionalString) String() string {
	if o.v == nil {
		return ""
	}
	return *o.v
}
func (o *optionalString) Set(s string) error { o.v = &s; return nil }
func (o *optionalString) Type() string       { return "string" }

// optionalBool is a boolean flag that tells "not given" (nil) from
// given false.
type optionalBool struct{ v *bool }

func (o *optionalBool) String() string {
	if o.v == nil {
		return "false"
	}
	return strconv.FormatBool(*o.v)
}
func (o *optionalBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	o.v = &b
	return nil
}
func (o *optionalBool) Type() string     { return "bool" }
func (o *optionalBool) IsBoolFlag() bool { return true }

func (f *configFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.path, "config", "", "run every Flux Kustomization found in this file or directory (e.g. clusters/prod) as a unit, in dependency order; --path and the unit's own settings then come from the Kustomizations")
	f.registerRun(cmd)
	fs.StringArrayVar(&f.decryption, "decryption-secret", nil, "with --config, NAME=FILE: age identities and armored PGP private keys standing in for the decryption Secret NAME that Kustomizations name (repeatable)")
	fs.StringArrayVar(&f.kubeconfigs, "kubeconfig-secret", nil, "with --config, NAME=FILE: the kubeconfig standing in for the kubeConfig Secret NAME that Kustomizations and HelmReleases name (repeatable)")
	fs.BoolVar(&f.controllers, "flux-controllers", false, "with --config, install Flux's own controllers (objects labelled app.kubernetes.io/part-of: flux, gotk-components.yaml) when a unit's build holds them; by default they are left out, since this run stands in for them")
	fs.StringArrayVar(&f.secrets, "secret", nil, "with --config, NAME=FILE: the values standing in for the Secret NAME that a notification Provider's spec.secretRef (or proxySecretRef, certSecretRef) names, FILE a Secret manifest or KEY=VALUE lines: address, token, username, password, headers (repeatable)")
	fs.BoolVar(&f.abortOnError, "abort-on-error", false, "with --config, stop at the first unit that fails: no other unit starts (those running finish), instead of running every unit that does not depend on it")
	_ = cmd.MarkFlagDirname("config")
	noCompletion(cmd, "decryption-secret", "kubeconfig-secret", "secret")
}

// registerRun registers the flags of a configuration's run that test
// shares with the commands that reach a cluster: how many units at once,
// which units, and where their sources come from.
func (f *configFlags) registerRun(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.IntVar(&f.parallel, "parallel", units.DefaultParallel, "with --config, units run at once when they do not depend on each other")
	fs.BoolVar(&f.verbose, "verbose", false, "with --config, print a note for each Flux field read but not acted on (interval) and each source taken as this checkout or fetched")
	fs.StringArrayVar(&f.sources, "source", nil, "with --config, KIND/NAMESPACE/NAME=DIR: build the Kustomizations whose sourceRef (or ArtifactGenerator source) names this source, another repository than this checkout, from DIR, a checkout of it (e.g. GitRepository/flux-system/podinfo=../podinfo; repeatable)")
	fs.StringArrayVar(&f.gitSecrets, "git-secret", nil, "with --config, NAME=FILE: the credentials standing in for the Secret NAME that a fetched GitRepository's spec.secretRef names, FILE a Secret manifest or KEY=VALUE lines: username and password (a token), bearerToken, or identity and known_hosts for SSH (repeatable)")
	fs.StringArrayVar(&f.ociSecrets, "oci-secret", nil, "with --config, NAME=FILE: the registry credentials standing in for the Secret NAME that a pulled OCIRepository's spec.secretRef names, FILE a Docker config.json or a Secret manifest of type kubernetes.io/dockerconfigjson (repeatable)")
	fs.BoolVar(&f.fetch, "fetch-sources", true, "with --config, fetch a GitRepository that is another repository than this checkout, and pull an OCIRepository's artifact, when not mapped with --source, at its spec.ref; false makes their Kustomizations fail instead")
	fs.StringSliceVar(&f.includeTags, "include-tag", nil, "run only the units (with --config) and HelmReleases with one of these tags (annotation kustomize-deploy.dev/tags; a unit's tags count as its HelmReleases'; comma-separated or repeated)")
	fs.StringSliceVar(&f.excludeTags, "exclude-tag", nil, "leave out the units (with --config) and HelmReleases with one of these tags, as they are (it wins over --include-tag; comma-separated or repeated)")
	fs.Var(&f.defaultAccount, "default-service-account", "with --config, apply a Kustomization or HelmRelease without spec.serviceAccountName as this service account of its namespace, as Flux's controllers with the same flag (multi-tenancy lockdown); by default, what the configuration's controllers declare (their Deployments' flags, a FluxInstance's spec.cluster.multitenant); empty turns it off")
	fs.Var(&f.noCrossRefs, "no-cross-namespace-refs", "with --config, refuse a Kustomization's sourceRef or a HelmRelease's chart in another namespace (AccessDenied), and an Alert's events from another namespace, as Flux's controllers with the same flag (multi-tenancy lockdown); by default, what the configuration's controllers declare")
	fs.Lookup("no-cross-namespace-refs").NoOptDefVal = "true"
	noCompletion(cmd, "parallel", "source", "git-secret", "oci-secret", "include-tag", "exclude-tag", "default-service-account")
}

// needsConfig says which of f's flags were given that only stop the
// units of a configuration; "" when none was.
func (f *configFlags) needsConfig() string {
	if f.abortOnError {
		return "--abort-on-error"
	}
	return ""
}

// perUnit are the flags a Kustomization sets for itself: with --config
// they would be ambiguous.
var perUnit = []string{"path", "target-namespace", "name-prefix", "name-suffix", "label", "annotation",
	"prune", "wait", "timeout", "health-check", "depends-on", "service-account"}

// runConfig runs the units of a configuration in mode.
func runConfig(ctx context.Context, cmd *cobra.Command, e *env, f *specFlags, cl *clusterFlags, cf *configFlags, mode result.Mode, correct bool, output string, revs *checkout.Worktrees) error {
	for _, name := range perUnit {
		if cmd.Flags().Changed(name) {
			return usagef("--%s cannot be used with --config: each Kustomization sets it", name)
		}
	}
	if cf.parallel < 1 {
		return usagef("--parallel must be at least 1")
	}
	s, err := configSpec(ctx, e, f, cl, cf, revs)
	if err != nil {
		return err
	}
	run, err := units.Open(ctx, s)
	if err != nil {
		return configError(err)
	}
	defer run.Close()
	opened(e, run, cf.verbose)
	var set *result.Set
	switch {
	case cf.offline:
		set = run.DiffOffline(ctx)
	case mode == result.ModeApply:
		set, err = run.Apply(ctx)
	case mode == result.ModeDiff:
		set, err = run.Diff(ctx)
	case mode == result.ModeDrift:
		set, err = run.Drift(ctx, correct)
	case mode == result.ModeDelete:
		set, err = run.Delete(ctx)
	}
	if err != nil {
		return err
	}
	set.MaskTexts(e.masker.String)
	if output == "json" {
		enc := json.NewEncoder(e.plain())
		enc.SetIndent("", "  ")
		if err := enc.Encode(set); err != nil {
			return err
		}
	} else {
		report.TextSet(e.plain(), set, mode != result.ModeApply && mode != result.ModeDelete)
	}
	if !set.Ready {
		hinted := map[string]bool{}
		for _, r := range set.Failed() {
			if h := hintFor(pipeline.Fix(r.Fix)); h != "" && !hinted[h] {
				hinted[h] = true
				fmt.Fprintln(e.stderr, "hint: "+h)
			}
		}
		return errReported
	}
	return nil
}

// configSpec is the configuration the flags name, with what they set for
// every unit.
func configSpec(ctx context.Context, e *env, f *specFlags, cl *clusterFlags, cf *configFlags, revs *checkout.Worktrees) (units.Spec, error) {
	if cf.path == "" {
		return units.Spec{}, usagef("--config is required")
	}
	s := units.Spec{
		Path: cf.path, Root: f.spec.Root, Unit: f.spec, Getenv: e.getenv, HTTPClient: e.cloud, Sigstore: e.sigstore,
		Only: splitNames(f.spec.Name), Parallel: cf.parallel, FluxControllers: cf.controllers,
		AbortOnError: cf.abortOnError,
		Progress:     e.stderr, Mask: func(v []string) { e.masker.Add(v...) },
		Lockdown: units.LockdownOverride{DefaultServiceAccount: cf.defaultAccount.v, NoCrossNamespaceRefs: cf.noCrossRefs.v},
	}
	s.Unit.InventoryNamespace = cl.inventoryNS
	gh, err := e.github()
	if err != nil {
		return s, err
	}
	s.GitHub = gh
	keys, err := namedFiles("--decryption-secret", cf.decryption, func(file string) ([]string, error) {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		keys, err := decrypt.ParseKeys(data)
		e.masker.Add(keys...)
		return keys, err
	})
	if err != nil {
		return s, err
	}
	s.DecryptionKeys = keys
	for _, v := range cf.sources {
		ref, dir, err := units.ParseSource(v)
		if err != nil {
			return s, usagef("--source: %v", err)
		}
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return s, usagef("--source %s: %s is not a directory", ref, dir)
		}
		if s.Sources == nil {
			s.Sources = map[config.SourceRef]string{}
		}
		s.Sources[ref] = dir
	}
	s.NoFetch = !cf.fetch
	if s.GitSecrets, err = credentialFiles(e, "--git-secret", cf.gitSecrets, gitsource.ParseAuth); err != nil {
		return s, err
	}
	if s.OCISecrets, err = credentialFiles(e, "--oci-secret", cf.ociSecrets, ocisource.ParseAuth); err != nil {
		return s, err
	}
	if s.Secrets, err = credentialFiles(e, "--secret", cf.secrets, notify.ParseSecret); err != nil {
		return s, err
	}
	// Notifications: a github Provider with no token of its own uses the
	// job's (GITHUB_TOKEN), for repositories of the job's server only.
	s.Notifications = notify.DefaultOptions()
	s.Notifications.GitHubToken = e.getenv("GITHUB_TOKEN")
	s.Notifications.GitHubServer = cmp.Or(e.getenv("GITHUB_SERVER_URL"), "https://github.com")
	s.Notifications.GitHubAPI = e.getenv("GITHUB_API_URL")
	s.Notifications.Redact = e.masker.String
	e.masker.Add(s.Notifications.GitHubToken)
	kubeconfigs, err := namedFiles("--kubeconfig-secret", cf.kubeconfigs, func(file string) ([]string, error) {
		_, err := os.Stat(file)
		return []string{file}, err
	})
	if err != nil {
		return s, err
	}
	s.Cluster = clusterOf(ctx, e, cl, kubeconfigs, cf.offline)
	if cf.base != "" {
		if s.Base, err = resolveBase(ctx, cf.path, cf.base); err != nil {
			return s, err
		}
	}
	s.AllUnits = cf.allUnits
	s.At = revs.Unit // the base of a three-way diff; the rollback of a failed Helm upgrade
	return s, nil
}

// configError says what is wrong with a configuration in the CLI's words:
// a bad path or bad flag values are usage errors (exit 2).
func configError(err error) error {
	var ce *units.ConfigError
	if errors.As(err, &ce) && ce.Path {
		return usagef("--config: %v", ce.Err)
	}
	if errs := spec.OptionErrors(err); len(errs) > 0 {
		return flagErrors(errs)
	}
	return err
}

func splitNames(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// namedFiles reads NAME=FILE flag values with read.
func namedFiles(flag string, values []string, read func(file string) ([]string, error)) (map[string][]string, error) {
	out := map[string][]string{}
	for _, v := range values {
		name, file, ok := strings.Cut(v, "=")
		if !ok || name == "" || file == "" {
			return nil, usagef("%s %q: want NAME=FILE", flag, v)
		}
		got, err := read(file)
		if err != nil {
			return nil, usagef("%s %s: %v", flag, name, err)
		}
		out[name] = append(out[name], got...)
	}
	return out, nil
}

// clusterOf connects to the default cluster (the cluster flags) for units
// without a kubeConfig, and to the kubeconfig given for the Secret a unit
// names otherwise; offline, to none.
func clusterOf(ctx context.Context, e *env, cl *clusterFlags, kubeconfigs map[string][]string, offline bool) func(secret string) (*kube.Clients, error) {
	return func(name string) (*kube.Clients, error) {
		switch {
		case offline:
			return nil, nil
		case name == "":
			return cl.clients(ctx, e)
		}
		files := kubeconfigs[name]
		if len(files) == 0 {
			return nil, fmt.Errorf("spec.kubeConfig names Secret %s: give its kubeconfig with --kubeconfig-secret %s=FILE", name, name)
		}
		flags := genericclioptions.NewConfigFlags(true)
		flags.KubeConfig = &files[0]
		return reached(ctx)(kube.Load(kube.Options{Config: flags, QPS: float32(cl.qps), Burst: cl.burst, Requests: e.requests}))
	}
}

// credentialFiles parses the credentials each NAME=FILE of flag gives,
// masking their secrets as soon as parse finds them, even when it then
// refuses them; nil when the flag is not given.
func credentialFiles[T interface{ Secrets() []string }](e *env, flag string, values []string, parse func([]byte) (T, error)) (map[string]T, error) {
	files, err := namedFiles(flag, values, func(file string) ([]string, error) {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		return []string{string(data)}, nil
	})
	if err != nil {
		return nil, err
	}
	var out map[string]T
	for name, contents := range files {
		if len(contents) > 1 {
			return nil, usagef("%s %s is given twice", flag, name)
		}
		auth, err := parse([]byte(contents[0]))
		e.masker.Add(auth.Secrets()...)
		if err != nil {
			return nil, usagef("%s %s: %v", flag, name, err)
		}
		if out == nil {
			out = map[string]T{}
		}
		out[name] = auth
	}
	return out, nil
}

// opened prints what opening a configuration found to say: its notes
// (all of them when verbose, else how many) and its warnings.
func opened(e *env, run *units.Run, verbose bool) {
	switch notes := run.Notes; {
	case verbose:
		for _, n := range notes {
			fmt.Fprintln(e.stderr, "note: "+n)
		}
	case len(notes) > 0:
		fmt.Fprintf(e.stderr, "note: %d note(s) about Flux fields read but not acted on, such as interval, and sources taken as this checkout or fetched (--verbose lists them)\n", len(notes))
	}
	for _, w := range run.Warnings {
		fmt.Fprintln(e.stderr, "warning: "+w)
	}
}
