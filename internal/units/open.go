package units

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	kdimages "github.com/kustomize-deploy/kustomize-deploy/internal/images"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/notify"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gitsource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

// DefaultParallel is how many units run at once unless told otherwise.
// Units mostly wait for the API server (dry-runs, applies, reads, health),
// so more run at once than a runner has cores: a no-op of 100 units found
// by building took 2.2 s at 4, 1.8 s at 8 (docs/benchmarks.md).
const DefaultParallel = 8

// Spec is a configuration of Flux Kustomizations as a front end was
// given it: where it is, what its flags or inputs set for every unit,
// and how to reach the clusters and keys its units name. Each front end
// only translates its own words (flags, inputs) into a Spec; Open does the
// rest, the same for both.
type Spec struct {
	// Path is the configuration: a file or a directory of Kustomizations.
	// Root, when set, is the repository root (default: the git work tree
	// around Path).
	Path, Root string
	// Unit holds what the flags or inputs set for every unit (revision,
	// keys, validation, inventory namespace, substitutions, images...).
	// Its Path, Root and Name are not read: each Kustomization sets its own.
	Unit spec.Unit
	// Getenv reads the environment, as spec.Unit.Options does.
	Getenv func(string) string
	// HTTPClient reaches the key services SOPS files name (Vault, Google,
	// Azure); nil means each client's default.
	HTTPClient *http.Client
	// Only, when set, limits the run to these units; their dependencies
	// outside it are checked in the cluster, as other runs' are.
	Only []string
	// AbortOnError stops the run at the first unit that fails: no unit
	// starts after it (those running finish), instead of running every
	// unit that does not depend on it.
	AbortOnError bool
	// DecryptionKeys are the private keys (age identities, PGP key blocks:
	// decrypt.ParseKeys) standing in for the decryption Secrets units name
	// (spec.decryption.secretRef.name).
	DecryptionKeys map[string][]string
	// Cluster connects to the cluster whose kubeconfig stands in for the
	// kubeConfig Secret a unit names, "" for the default cluster (units
	// without spec.kubeConfig). Each is asked for once. Nil clients with
	// no error mean no cluster: only DiffOffline can run.
	Cluster func(secret string) (*kube.Clients, error)
	// Base, with At, makes a diff three-way (see pipeline.Options.Base),
	// and is the revision DiffOffline compares with.
	Base string
	At   func(ctx context.Context, rev string, head paths.Dir) (*paths.Dir, error)
	// Progress receives every unit's progress lines, each prefixed with
	// the unit's name; nil discards. Mask is called with every secret
	// value as soon as it is known (see pipeline.Options.Mask).
	Progress io.Writer
	Mask     func(values []string)
	// Parallel bounds the units run at once; 0 means DefaultParallel.
	Parallel int
	// Sources map sources that are not this repository to directories the
	// user checked out (relative to the working directory, or absolute):
	// a unit whose sourceRef names one builds spec.path there (see
	// ParseSource). Which sources are this repository is told by the
	// checkout's remote origin and, in GitHub Actions, GITHUB_REPOSITORY
	// (read through Getenv).
	Sources map[config.SourceRef]string
	// FluxControllers installs Flux's own controllers when a unit's build
	// emits them (gotk-components.yaml); by default they are left out, since
	// the run stands in for them (see pipeline.RunByConfiguration).
	FluxControllers bool
	// Lockdown sets Flux's multi-tenancy lockdown for repositories whose
	// controllers are installed elsewhere: it wins over what the
	// configuration declares (see LockdownOverride).
	Lockdown LockdownOverride
	// NoFetch leaves a GitRepository that is another repository, not
	// mapped, failing (ArtifactFailed) instead of fetching it at its
	// spec.ref. GitSecrets stand in for the Secrets such GitRepositories'
	// spec.secretRef names (gitsource.ParseAuth), by name.
	NoFetch    bool
	GitSecrets map[string]gitsource.Auth
	// GitHub is the run's GitHub client, with its token: what the
	// ResourceSetInputProviders of a GitHub type list pull requests,
	// branches and tags with (nil: none, they fail). Every unit shares one
	// cache of its answers for the run.
	GitHub resourceset.GitHub
	// OCISecrets stand in for the Secrets an OCIRepository's
	// spec.secretRef names (ocisource.ParseAuth), by name: OCIRepositories
	// not mapped are pulled (unless NoFetch).
	OCISecrets map[string]ocisource.Auth
	// Secrets stand in for the Secrets notification Providers name
	// (spec.secretRef, proxySecretRef, certSecretRef), by name: before the
	// configuration's own files, then the cluster (see notificationSecret).
	Secrets map[string]notify.Secret
	// Sigstore is the trust keyless cosign signatures (spec.verify
	// without a secretRef) are verified against, for sources and charts;
	// the zero value is Sigstore's public good, read through TUF.
	Sigstore ocisource.Sigstore
	// Notifications say how the run reaches the Providers of the
	// configuration's Alerts (the job's GitHub token and server, the HTTP
	// transport); Open sets their Secret and Mask.
	Notifications notify.Options
	// AllUnits renders every unit in a diff against Base, not only those
	// the change since Base reaches (see reach).
	AllUnits bool
}

// Run is an opened configuration: its units mapped onto the engine, ready
// to be applied, diffed or checked for drift.
type Run struct {
	cfg   Config
	path  string // the configuration as given
	units []Unit
	// all are the units before those the change since the base does not
	// reach were left out (reach); units when every unit runs.
	all   []Unit
	reach *reached
	opts  runOptions
	// Dir is the configuration's directory in the repository.
	Dir paths.Dir
	// Notes are one line each about Flux fields read but not acted on,
	// and about which sources were taken as this checkout.
	Notes []string
	// Warnings say which units could not be built to find the
	// Kustomizations they emit, and why: those are not run, and no unit
	// is garbage-collected; and which sources' signatures were not
	// checked, since a directory mapped to them stands in for them.
	Warnings []string
}

// Close removes what resolving the units' sources made (artifacts of
// ArtifactGenerators, GitRepositories fetched) and the units' copies of
// the repository kept for reuse.
func (r *Run) Close() error {
	if r == nil {
		return nil
	}
	err := r.cfg.Base.Snapshot.Close()
	if r.cfg.sources != nil {
		err = errors.Join(r.cfg.sources.Close(), err)
	}
	return err
}

// ConfigError is a problem with the configuration itself: a path that is
// not in the repository, Kustomizations that do not read, or units that
// cannot be mapped onto the engine. Each front end names its own flag or
// input for it. An error that is not one is either an *spec.OptionError
// (see spec.OptionErrors) or the cluster's.
type ConfigError struct {
	// Path says the configuration's path is wrong (not the files in it).
	Path bool
	Err  error
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Open reads the configuration s names, works out the options every unit
// starts from, lists the repository's files once for every unit, and maps
// each Kustomization onto the engine. Every problem of one kind is
// reported at once: the configuration's (a *ConfigError, one per line),
// else the options' (spec.OptionErrors).
func Open(ctx context.Context, s Spec) (*Run, error) {
	set, dir, err := Load(s.Path, s.Root)
	if err != nil {
		var pe *PathError
		return nil, &ConfigError{Path: errors.As(err, &pe), Err: err}
	}
	u := s.Unit
	u.Path, u.Root, u.Name = dir.Path, dir.Root, ""
	getenv := s.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	base, err := u.Options(ctx, spec.NeedPath, getenv)
	if err != nil {
		return nil, err
	}
	base.Progress, base.Mask = s.Progress, s.Mask
	base.Decryption.HTTPClient = s.HTTPClient
	if s.Mask != nil {
		s.Mask(base.Decryption.Secrets())
	}
	base.Base, base.At = s.Base, s.At
	// Images resolve with the credentials sources get: the Docker config
	// Secrets the configuration maps, named by each pod's
	// imagePullSecrets.
	if reg, ok := base.ResolveImages.(kdimages.Registry); ok {
		reg.Secrets = s.OCISecrets
		base.ResolveImages = reg
	}
	if base.Charts != nil && base.Charts.Fetcher != nil {
		base.Charts.Fetcher.Sigstore = s.Sigstore
	}
	base.ResourceSets = resourceset.Options{GitHub: s.GitHub, Cache: &resourceset.Cache{}}
	// The repository's files are listed once for every unit, and a unit
	// built to find Kustomizations is not built again when it runs.
	if base.Snapshot, err = workspace.List(ctx, dir.Root, workspace.Options{}); err != nil {
		return nil, err
	}
	// Each unit's copy of the files is kept for the next, reset, until
	// the run closes: making and removing a copy per unit cost most of a
	// whole-repository render.
	base.Snapshot.Reuse()
	opened := false
	defer func() {
		if !opened {
			_ = base.Snapshot.Close()
		}
	}()
	base.Builds = &pipeline.Builds{}
	mapped, err := mappedSources(s.Sources)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	origin := checkout.Origin(ctx, dir.Root)
	cfg := Config{
		Set: set, Root: dir.Root, ID: ConfigID(origin, configDir(s.Path, dir.Rel, set)),
		Base: base, Images: base.Build.Images, DecryptionKeys: s.DecryptionKeys, Only: s.Only,
		Cluster:  Clusters(s.Cluster),
		Identity: source.Identity{Remote: origin, GitHubServer: getenv("GITHUB_SERVER_URL"), GitHubRepository: getenv("GITHUB_REPOSITORY")},
		Mapped:   mapped, FluxControllers: s.FluxControllers, Lockdown: s.Lockdown, Getenv: getenv,
		Fetch: !s.NoFetch, GitSecrets: s.GitSecrets, OCISecrets: s.OCISecrets,
		GitHubToken: s.Notifications.GitHubToken, GitHubServer: s.Notifications.GitHubServer,
		Sigstore: s.Sigstore,
	}
	if s.Mask != nil {
		for _, a := range s.GitSecrets {
			s.Mask(a.Secrets())
		}
		for _, a := range s.OCISecrets {
			s.Mask(a.Secrets())
		}
		for _, secret := range s.Secrets {
			s.Mask(secret.Secrets())
		}
	}
	if len(u.Substitute)+len(u.SubstituteFrom) > 0 {
		cfg.Substitute = base.Substitute
	}
	cfg.sources = cfg.newResolver()
	// The sources the configuration names are fetched all at once, within
	// one deadline (see source.Resolver.Prefetch): at each level of discovery,
	// and once it is done.
	if cfg.undiscovered, err = cfg.discover(ctx); err != nil {
		cfg.sources.Close()
		return nil, &ConfigError{Err: err}
	}
	// The run's tags (Unit's) limit it further to the units they select,
	// as Only does; the units' HelmReleases are picked by them too.
	if cfg.Only, err = selectTags(cfg.Set, cfg.Only, s.Unit.IncludeTags, s.Unit.ExcludeTags, orDiscard(s.Progress)); err != nil {
		cfg.sources.Close()
		return nil, &ConfigError{Err: err}
	}
	cfg.sources.Prefetch(ctx)
	list, err := cfg.Units(ctx)
	if err != nil {
		cfg.sources.Close()
		return nil, &ConfigError{Err: err}
	}
	for _, u := range list {
		var de *DeferredError
		if errors.As(u.Err, &de) && cfg.undiscovered[de.Unit.Ref] != nil {
			// Not built to find what it emits for the reason it is
			// deferred, said as such.
			cfg.undiscovered[de.Unit.Ref] = &discoverError{err: de}
		}
	}
	notes := append(append(slices.Clone(set.Notes), cfg.lockdownNotes()...), cfg.sources.Notes()...)
	for _, ref := range slices.SortedFunc(maps.Keys(mapped), func(a, b config.SourceRef) int { return strings.Compare(a.String(), b.String()) }) {
		if !usesSource(set, ref) {
			notes = append(notes, fmt.Sprintf("%s is mapped to %s, but no Kustomization or ArtifactGenerator of the configuration names it", ref, mapped[ref]))
		}
	}
	parallel := s.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	warnings := append(undiscoveredWarnings(set, cfg.undiscovered), cfg.sources.Warnings()...)
	n := s.Notifications
	n.Secret, n.Mask = cfg.notificationSecret(s.Secrets), s.Mask
	n.NoCrossNamespaceRefs = cfg.tenancyOf(config.NotificationController).noCross
	notifier := notify.New(set.Notifications, n)
	warnings = append(warnings, notifier.Warnings...)
	all := list
	var reached *reached
	if s.Base != "" && s.At != nil && !s.AllUnits {
		if reached, err = cfg.reach(ctx, s.Path, list); err != nil {
			warnings = append(warnings, fmt.Sprintf("every unit is rendered: which units the change since %s reaches is not known: %v", checkout.Short(s.Base), err))
		} else {
			list = reached.only(list)
			fmt.Fprintln(orDiscard(s.Progress), reachLine(reached.report))
		}
	}
	opened = true
	return &Run{
		cfg: cfg, path: s.Path, units: list, all: all, reach: reached, Dir: dir, Notes: notes, Warnings: warnings,
		opts: runOptions{Parallel: parallel, Progress: s.Progress, AbortOnError: s.AbortOnError, Notifier: notifier},
	}, nil
}

// undiscoveredWarnings say which units could not be built to find the
// Kustomizations they emit, one line per cause: a Secret missing from
// the cluster that every app substitutes from is one line, with how many
// units it stopped, not one per unit before the error that matters.
func undiscoveredWarnings(set *config.Set, undiscovered map[config.Ref]error) []string {
	var causes []string
	byCause := map[string][]*config.Unit{}
	for _, u := range set.Units {
		err := undiscovered[u.Ref]
		if err == nil {
			continue
		}
		cause := err.Error()
		var de *discoverError
		if errors.As(err, &de) {
			cause = de.err.Error()
		}
		if _, ok := byCause[cause]; !ok {
			causes = append(causes, cause)
		}
		byCause[cause] = append(byCause[cause], u)
	}
	var warnings []string
	for _, cause := range causes {
		us := byCause[cause]
		if len(us) == 1 {
			u := us[0]
			warnings = append(warnings, fmt.Sprintf("unit %s (%s): %v; the Kustomizations it may apply are not run, and no unit that left the configuration is garbage-collected", u.Name, where(u), undiscovered[u.Ref]))
			continue
		}
		var names []string
		for _, u := range us {
			names = append(names, u.Name)
		}
		warnings = append(warnings, fmt.Sprintf("%d units (%s) could not be built to find the Flux Kustomizations they apply: %s; the Kustomizations they may apply are not run, and no unit that left the configuration is garbage-collected", len(us), fewOf(names), cause))
	}
	return warnings
}

// fewOf names the first few of names, and how many more there are.
func fewOf(names []string) string {
	const shown = 3
	list := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		list += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return list
}

// configDir is the directory that names the configuration at path (dir,
// relative to the root): given as the one file of Flux's own sync
// (gotk-sync.yaml), it is the directory the sync applies, so that the
// file and that directory are one configuration, whose units neither
// collects from the other.
func configDir(path, dir string, set *config.Set) string {
	if info, err := os.Stat(path); err == nil && !info.IsDir() && len(set.Units) > 0 && set.Units[0].Sync {
		return set.Units[0].Path
	}
	return dir
}

// Units are the units the run runs, in configuration order: in a diff
// against a base, those the change reaches (see reach).
func (r *Run) Units() []Unit { return r.units }

// AllUnits are the units of the run, those a diff against a base does
// not reach included.
func (r *Run) AllUnits() []Unit { return r.all }

// Set is the configuration read: its files' Kustomizations and those
// found by building them.
func (r *Run) Set() *config.Set { return r.cfg.Set }

// ID names the configuration (see ConfigID).
func (r *Run) ID() string { return r.cfg.ID }

// Apply applies the units in dependency order; after an apply of the
// whole configuration (no Only), it garbage-collects the units that left
// it, whose results join the set: all of them, or none when that is over
// the prune budget (more units than its MaxUnits, or objects over Max or
// of a Protect kind, unless Allow). Failing to look for them is a warning
// on the progress writer, not a failure of the run.
func (r *Run) Apply(ctx context.Context) (*result.Set, error) {
	return r.cfg.execute(ctx, r.all, r.all, r.with(result.ModeApply, false)) // every unit: reach is a diff's
}

// Diff diffs every unit against its cluster, and for a diff of the whole
// configuration lists the units that left it with what the apply will do
// to them (failed when over the prune budget, as the apply would be).
// When three-way (Spec.Base), it also marks which units merging suspends
// or resumes; failing to tell is a warning on the progress writer.
func (r *Run) Diff(ctx context.Context) (*result.Set, error) {
	set, err := r.cfg.execute(ctx, r.units, r.all, r.with(result.ModeDiff, false))
	if err != nil {
		return nil, err
	}
	if r.reach != nil {
		set.Reach = r.reach.report
	}
	if err := r.cfg.markSuspensions(ctx, r.path, set); err != nil && r.opts.Progress != nil {
		fmt.Fprintf(r.opts.Progress, "warning: which units merging suspends or resumes is not shown: %v\n", err)
	}
	return set, nil
}

// Drift compares every unit's cluster with Git; with correct, the units
// that drifted are applied again.
func (r *Run) Drift(ctx context.Context, correct bool) (*result.Set, error) {
	return r.cfg.execute(ctx, r.all, r.all, r.with(result.ModeDrift, correct))
}

func (r *Run) with(mode result.Mode, correct bool) runOptions {
	o := r.opts
	o.Mode, o.Correct = mode, correct
	return o
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// mappedSources resolves the directories sources are mapped to: each must
// be a directory; absolute, symlinks evaluated.
func mappedSources(in map[config.SourceRef]string) (map[config.SourceRef]string, error) {
	out := map[config.SourceRef]string{}
	var errs []error
	for ref, dir := range in {
		abs, err := filepath.Abs(dir)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err == nil {
			var info os.FileInfo
			if info, err = os.Stat(abs); err == nil && !info.IsDir() {
				err = fmt.Errorf("%s is not a directory", dir)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("source %s mapped to %s: %w", ref, dir, err))
			continue
		}
		out[ref] = abs
	}
	return out, errors.Join(errs...)
}

// usesSource says whether a unit or generator of set names ref.
func usesSource(set *config.Set, ref config.SourceRef) bool {
	for _, u := range set.Units {
		if u.Source == ref {
			return true
		}
	}
	for _, g := range set.Generators {
		for _, s := range g.Sources {
			if s.Source == ref {
				return true
			}
		}
	}
	return false
}
