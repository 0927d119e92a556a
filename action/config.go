package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/notify"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
	"github.com/kustomize-deploy/kustomize-deploy/internal/units"
)

// notifications say how the run posts to the Providers of the
// configuration's Alerts: a github Provider with no token of its own gets
// the job's (github-token), for the job's GitHub server alone; events are
// masked as every other output is.
func (r *runner) notifications() notify.Options {
	o := notify.DefaultOptions()
	o.GitHubToken = r.in.GitHubToken
	o.GitHubServer = cmp.Or(r.env.Getenv("GITHUB_SERVER_URL"), "https://github.com")
	o.GitHubAPI = r.ev.APIURL
	o.Redact = r.masker.String
	return o
}

// runConfig runs every Flux Kustomization of the config input as a unit,
// in dependency order, and returns what to report: one commit status per
// unit, one PR comment and job summary for the run.
func (r *runner) runConfig(ctx context.Context) (outcome, error) {
	var cleanups []func()
	defer func() {
		for _, c := range cleanups {
			c()
		}
	}()
	reach := r.access()
	keys, err := reach.decryptionKeys()
	if err != nil {
		return outcome{}, err
	}
	gitSecrets, err := reach.gitSecrets()
	if err != nil {
		return outcome{}, err
	}
	ociSecrets, err := reach.ociSecrets()
	if err != nil {
		return outcome{}, err
	}
	secrets, err := reach.secrets()
	if err != nil {
		return outcome{}, err
	}
	var clients *kube.Clients
	if r.in.Mode != ModeTest { // a test reaches no cluster
		var done func()
		clients, done, err = reach.connect(ctx)
		cleanups = append(cleanups, done)
		if err != nil {
			return outcome{}, err
		}
	}
	s := units.Spec{
		Path: r.configPath(), Unit: r.spec(), Getenv: r.env.Getenv, HTTPClient: r.env.CloudClient, Only: r.in.Units, Parallel: r.in.Parallel,
		AbortOnError:   r.in.AbortOnError,
		DecryptionKeys: keys, FluxControllers: r.in.FluxControllers,
		Lockdown:   units.LockdownOverride{DefaultServiceAccount: r.in.DefaultServiceAccount, NoCrossNamespaceRefs: r.in.NoCrossNamespaceRefs},
		GitSecrets: gitSecrets, OCISecrets: ociSecrets, NoFetch: !r.in.FetchSources, Secrets: secrets, GitHub: r.github(),
		Notifications: r.notifications(),
		Progress:      r.log, Mask: func(v []string) { r.maskValues(v...) },
		Cluster: func(name string) (*kube.Clients, error) {
			if name == "" || clients == nil {
				return clients, nil
			}
			c, done, err := reach.named(ctx, name)
			cleanups = append(cleanups, done)
			return c, err
		},
	}
	switch {
	case r.in.Mode == ModeTest: // the checkout alone, against nothing
	case r.mode == result.ModeDiff: // three-way against the cluster, or offline
		s.Base, s.At, s.AllUnits = r.ev.BaseSHA, r.unitAt, r.in.AllUnits
	case r.mode == result.ModeApply: // a failed Helm upgrade rolls back to the revision last applied
		s.At = r.unitAt
	}
	for ref, dir := range r.in.Sources {
		if !filepath.IsAbs(dir) && r.ev.WorkspaceDir != "" {
			dir = filepath.Join(r.ev.WorkspaceDir, dir)
		}
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return outcome{}, fmt.Errorf("input 'sources': %s: %s is not a directory of the workspace (check the repository out there, e.g. actions/checkout with path:)", ref, r.in.Sources[ref])
		}
		if s.Sources == nil {
			s.Sources = map[config.SourceRef]string{}
		}
		s.Sources[ref] = dir
	}
	run, err := units.Open(ctx, s)
	if err != nil {
		return outcome{}, r.configError(err)
	}
	defer run.Close()
	list := run.Units()
	if n := len(run.Notes); n > 0 {
		fmt.Fprintf(r.log, "note: %d note(s) about Flux fields read but not acted on, such as interval, and sources taken as this checkout or fetched\n", n)
	}
	for _, w := range run.Warnings {
		fmt.Fprintf(r.log, "::warning::%s\n", w)
	}
	clusters := map[string]string{}
	for _, u := range run.AllUnits() { // those not reached get a status too
		clusters[u.Options.Name] = r.unitCluster(u.ClusterName)
	}
	for _, u := range list {
		if r.mode != result.ModeDrift { // a drift check's status goes on the commit the cluster runs, known later
			r.gh.status(ctx, statusContext(clusters[u.Options.Name], u.Options.Name), "pending", fmt.Sprintf("%s of %s running", r.modeName(), u.Options.Name))
		}
	}

	dir := run.Dir
	title := fmt.Sprintf("%s of %s (%d units)", r.modeName(), configName(dir, r.in.Config), len(list))
	r.log.Flush()
	r.gha.Group("kustomize-deploy: " + title)
	start := time.Now()
	var set *result.Set
	switch {
	case r.in.Mode == ModeTest:
		fmt.Fprintf(r.log, "testing every unit of %s without a cluster: build, substitution, charts, offline schema check, dangers\n", short(r.ev.SHA))
		set = run.DiffOffline(ctx)
	case clients == nil:
		fmt.Fprintf(r.log, "no cluster access (no kubeconfig): diffing rendered manifests of %s against the PR base %s\n", short(r.ev.SHA), short(r.ev.BaseSHA))
		set = run.DiffOffline(ctx)
	case r.mode == result.ModeDiff:
		set, err = run.Diff(ctx)
	case r.mode == result.ModeDrift:
		set, err = run.Drift(ctx, r.in.DriftAction != "report")
	default:
		set, err = run.Apply(ctx)
	}
	r.log.Flush()
	r.gha.EndGroup()
	if err != nil {
		return outcome{}, err
	}
	fmt.Fprintf(r.log, "%s: %s (%s)\n", title, setVerdict(set), time.Since(start).Round(time.Millisecond))
	noticed := map[string]bool{}
	for _, res := range set.Failed() {
		if res.Fix != "" && !noticed[res.Fix] {
			noticed[res.Fix] = true
			r.notice(pipeline.Fix(res.Fix))
		}
	}

	for _, res := range set.Units {
		if _, ok := clusters[res.Unit]; !ok { // a unit collected: it left the configuration
			clusters[res.Unit] = r.in.cluster()
		}
	}
	drifted := driftedUnits(set)
	if len(drifted) > 0 {
		r.gha.Warningf("%s", r.masker.String("drift: "+strings.Join(drifted, ", ")))
	}
	name := configName(dir, r.in.Config)
	file := nameFromPath(name)
	if file == "" {
		file = "config"
	}
	label, markerKind := r.in.configLabel(name), "config"
	if r.in.Mode == ModeTest {
		label, markerKind = "test of "+label, "test"
	}
	return outcome{
		results: set.Units, set: set, reach: set.Reach, title: label, file: file,
		marker:   marker(markerKind+"="+name, r.in.cluster()),
		clusters: clusters,
		ready:    set.Ready, drifted: len(drifted) > 0,
	}, nil
}

// modeName names the run's mode for people: the mode input's test, else
// the mode run.
func (r *runner) modeName() string {
	if r.in.Mode == ModeTest {
		return ModeTest
	}
	return string(r.mode)
}

// configError says what is wrong with the configuration in the action's
// words: the config input, or the input that set a bad value.
func (r *runner) configError(err error) error {
	var ce *units.ConfigError
	switch {
	case errors.As(err, &ce) && ce.Path:
		return fmt.Errorf("input 'config': %w", ce.Err)
	case errors.As(err, &ce):
		return fmt.Errorf("input 'config' %s:\n%w", r.in.Config, ce.Err)
	}
	if errs := spec.OptionErrors(err); len(errs) > 0 {
		return inputErrors(errs)
	}
	return err
}

// configPath is the config input, relative to the workspace.
func (r *runner) configPath() string {
	path := r.in.Config
	if !filepath.IsAbs(path) && r.ev.WorkspaceDir != "" {
		path = filepath.Join(r.ev.WorkspaceDir, path)
	}
	return path
}

// unitCluster names a unit's cluster in its commit status: the Secret its
// spec.kubeConfig names, else the run's (see cluster).
func (r *runner) unitCluster(secret string) string {
	if secret != "" {
		return strings.Trim(notLabel.ReplaceAllString(secret, "_"), "_")
	}
	return r.in.cluster()
}

// configName names the configuration input (a file or a directory) by
// its path in the repository, "." for the root.
func configName(dir paths.Dir, input string) string {
	name := dir.Rel
	if info, err := os.Stat(filepath.Join(dir.Path, filepath.Base(input))); err == nil && !info.IsDir() {
		name = path.Join(name, filepath.Base(input))
	}
	if name = path.Clean(filepath.ToSlash(name)); name == "" {
		name = "."
	}
	return name
}

// configLabel names the configuration, and the cluster when known.
func (in Inputs) configLabel(name string) string {
	if c := in.cluster(); c != "" {
		return name + " (" + c + ")"
	}
	return name
}

func setVerdict(s *result.Set) string {
	if s.Ready {
		return fmt.Sprintf("%d unit(s) ready", len(s.Units))
	}
	return fmt.Sprintf("%d of %d unit(s) failed", len(s.Failed()), len(s.Units))
}

func driftedUnits(s *result.Set) []string {
	var out []string
	for _, r := range s.Units {
		if r.Drifted {
			out = append(out, r.Unit)
		}
	}
	return out
}
