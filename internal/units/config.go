package units

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/azure"
	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/gcp"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/notify"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/acr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ecr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gar"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gitsource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// Config is a configuration of Flux Kustomizations to run as units.
type Config struct {
	// Set is what config.Read found below Root, the repository root.
	Set  *config.Set
	Root string
	// ID names the configuration (the repository and the directory read):
	// recorded on each unit's inventory, it tells which units left it.
	ID string
	// Base are the options every unit starts from: revision, inventory
	// namespace, validation, keys, recheck, lock holder, progress, mask.
	Base pipeline.Options
	// Images replace spec.images entries of the same name, as Flux's
	// image overrides do; Substitute adds values to every unit (they win
	// over the unit's own, and may be secret).
	Images     []build.Image
	Substitute map[string]string
	// DecryptionKeys are the private keys (age identities, PGP key blocks:
	// decrypt.ParseKeys) standing in for the decryption Secrets units name
	// (spec.decryption.secretRef.name).
	DecryptionKeys map[string][]string
	// Cluster returns the clients for a unit's cluster, and a name for it
	// in messages: the default cluster for a nil kubeConfig.
	Cluster func(kc *config.KubeConfig) (*kube.Clients, string, error)
	// Only, when set, limits the run to these units; their dependencies
	// outside it are checked in the cluster, as other runs' are.
	Only []string
	// Identity tells this repository apart, and Mapped are the
	// directories the user checked out for other sources (absolute): see
	// resolve.
	Identity source.Identity
	Mapped   map[config.SourceRef]string
	// Fetch fetches the GitRepositories that are other repositories, not
	// mapped, and pulls the OCIRepositories not mapped, with GitSecrets
	// (OCISecrets) standing in for the Secrets their spec.secretRef
	// names; without it they fail (ArtifactFailed).
	Fetch      bool
	GitSecrets map[string]gitsource.Auth
	// GitHubToken and GitHubServer are the job's: what a GitRepository
	// with provider github is fetched with, and from.
	GitHubToken, GitHubServer string
	OCISecrets                map[string]ocisource.Auth
	// Sigstore is the trust keyless signatures are verified against
	// (zero: Sigstore's public good).
	Sigstore ocisource.Sigstore

	// Getenv reads the environment (cloud providers' credentials).
	Getenv func(string) string

	// FluxControllers installs Flux's own controllers when a unit's build
	// emits them (gotk-components.yaml), which are otherwise left out.
	FluxControllers bool
	// Lockdown overrides the multi-tenancy lockdown the configuration
	// declares (Set.Lockdown; see tenancyOf).
	Lockdown LockdownOverride

	// sources resolves units' sourceRefs; nil makes one per call.
	sources *source.Resolver
	// accounts are the ServiceAccounts ("namespace/name") the builds of
	// discovery held, by the unit holding each: who to name when one a
	// unit impersonates does not exist.
	accounts map[string]string
	// creates are the Secrets and ServiceAccounts units' builds create,
	// by unit: what a source that reads its credentials from one waits
	// for (see deferSources).
	creates *creations
	// undiscovered are the units that could not be built to find the
	// Kustomizations they emit (see discover), with why: no unit is
	// garbage-collected; each runs, and fails at its own build.
	undiscovered map[config.Ref]error
	// preloaded are the inventories an apply listed as it began, by
	// cluster (see preloadInventories).
	preloaded map[*kube.Clients][]*inventory.Inventory
}

// resolver is c's source resolver.
func (c Config) resolver() *source.Resolver {
	if c.sources != nil {
		return c.sources
	}
	return c.newResolver()
}

func (c Config) newResolver() *source.Resolver {
	return source.NewResolver(source.Options{Set: c.Set, Root: c.Root, Identity: c.Identity, Mapped: c.Mapped,
		Revision: c.Base.Revision, RevisionTime: c.Base.RevisionTime,
		Fetch: c.Fetch, GitSecrets: c.GitSecrets, OCISecrets: c.OCISecrets,
		Secrets: c.secretLookup, Accounts: c.accountLookup, Mask: c.Base.Mask,
		GitHubToken: c.GitHubToken, GitHubServer: c.GitHubServer, Sigstore: c.Sigstore,
		AWS: ecr.Login,
		GCP: func(ctx context.Context, host string, envOnly bool) (string, string, error) {
			return gar.Login(ctx, host, gar.Options{Credentials: gcp.Options{Getenv: c.Getenv}, EnvironmentOnly: envOnly})
		},
		Azure: func(ctx context.Context, host string, envOnly bool) (string, string, error) {
			return acr.Login(ctx, host, acr.Options{Credentials: azure.Options{Getenv: c.Getenv}, EnvironmentOnly: envOnly})
		},
		Offline: func() bool {
			// No cluster to reach: only an offline diff runs.
			if c.Cluster == nil {
				return false
			}
			cl, _, err := c.Cluster(nil)
			return err == nil && cl == nil
		}})
}

// Units maps the configuration's units onto the engine. Every problem is
// reported (joined), each naming the unit and where it is defined. A
// unit whose source cannot be resolved is no problem of the
// configuration: it is returned with Err set, and fails when run.
func (c Config) Units(ctx context.Context) ([]Unit, error) {
	byRef := map[config.Ref]*config.Unit{}
	for _, u := range c.Set.Units {
		byRef[u.Ref] = u
	}
	var errs []error
	for _, name := range c.Only {
		if !slices.ContainsFunc(c.Set.Units, func(u *config.Unit) bool { return u.Name == name }) {
			errs = append(errs, fmt.Errorf("unit %s is not in the configuration", name))
		}
	}
	var out []Unit
	for _, u := range c.Set.Units {
		if len(c.Only) > 0 && !slices.Contains(c.Only, u.Name) {
			continue
		}
		unit, err := c.unit(ctx, u, byRef)
		var ce *clusterError
		switch {
		case errors.As(err, &ce):
			// The run was not given what reaches the unit's cluster:
			// the front end's to fix before anything runs.
			errs = append(errs, fmt.Errorf("unit %s (%s:%d): %w", u.Name, u.File, u.Line, ce.err))
			continue
		case err != nil:
			// A problem of one unit's definition refuses that unit when
			// its turn comes, not the configuration.
			unit = c.refusedUnit(u, byRef, err)
		}
		out = append(out, unit)
	}
	c.addWaits(out)
	c.deferSources(ctx, out)
	return out, errors.Join(errs...)
}

// clusterError is a unit's cluster that cannot be reached with what
// the run was given (a kubeConfig Secret no kubeconfig stands in for).
type clusterError struct{ err error }

func (e *clusterError) Error() string { return e.err.Error() }
func (e *clusterError) Unwrap() error { return e.err }

// RefusedError is a unit refused for a problem of its own definition: a
// field of its Kustomization unknown, not honoured, or of a wrong value
// (Problems, each at its file and line), or one that cannot be mapped
// onto the engine (Err). It fails with BuildFailed when its turn comes,
// skipping its dependents; nothing is built, applied or deleted in its
// name, and no unit is garbage-collected in that run (what it would
// emit is unknown).
type RefusedError struct {
	Unit     string
	Where    string
	Problems []*config.Error
	Err      error
}

func (e *RefusedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("unit %s (%s): %v", e.Unit, e.Where, e.Err)
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

func (e *RefusedError) Unwrap() error { return e.Err }

// refusedUnit is unit u refused (see RefusedError): only its name, where it
// is defined and its dependencies are read, to order it among the
// others; err, when set, is why it cannot be mapped onto the engine,
// else its Kustomization's own problems (u.Refused) are.
func (c Config) refusedUnit(u *config.Unit, byRef map[config.Ref]*config.Unit, err error) Unit {
	o := c.Base
	o.Name, o.Config = u.Name, c.ID
	o.DependsOn, o.Dependency = nil, nil
	unit := Unit{Where: where(u), Err: &RefusedError{Unit: u.Name, Where: where(u), Problems: u.Refused, Err: err}}
	if len(u.EmittedBy) > 0 {
		unit.Where += ", emitted by " + u.EmittedBy[len(u.EmittedBy)-1].String()
	}
	for _, ref := range dependencies(u) {
		if dep, inSet := byRef[ref]; inSet && (len(c.Only) == 0 || slices.Contains(c.Only, dep.Name)) {
			unit.DependsOn = append(unit.DependsOn, dep.Name)
		}
	}
	unit.Cluster, unit.ClusterName, _ = c.Cluster(nil)
	unit.Options = o
	return unit
}

// unit maps u onto the engine, building from what its sourceRef names
// (see source.Resolver): a unit whose source cannot be resolved has Err
// set and builds nothing.
func (c Config) unit(ctx context.Context, u *config.Unit, byRef map[config.Ref]*config.Unit) (Unit, error) {
	if len(u.Refused) > 0 {
		return c.refusedUnit(u, byRef, nil), nil
	}
	if len(u.BuildMetadata) > 0 {
		return Unit{}, errors.New("spec.buildMetadata is not supported yet")
	}
	clients, clusterName, err := c.Cluster(u.KubeConfig)
	if err != nil {
		return Unit{}, &clusterError{err}
	}
	o := c.Base
	o.Name = u.Name
	sources := c.resolver()
	kustomize := c.tenancyOf(config.KustomizeController)
	var src source.Tree
	srcErr := kustomize.sourceDenied(u)
	if srcErr == nil {
		src, srcErr = sources.Resolve(ctx, u)
		srcErr = sourceError(u, srcErr)
	}
	o.Build = build.Options{
		TargetNamespace: u.TargetNamespace, NamePrefix: u.NamePrefix, NameSuffix: u.NameSuffix,
		Images: images(u.Images, c.Images),
		Labels: u.Labels, Annotations: u.Annotations,
		Patches:    patches(u.Patches),
		Components: u.Components, IgnoreMissingComponents: u.IgnoreMissingComponents,
		AllowRemoteBases: c.Base.Build.AllowRemoteBases, NoRemoteBases: kustomize.remoteBases(),
	}
	if src := u.Source; src.Kind != "" {
		// The unit is built from its source's tree: a HelmRelease's chart
		// from the same GitRepository is read from it.
		o.Charts = o.Charts.FromSource(helm.Reference{Kind: src.Kind, Name: src.Name, Namespace: src.Namespace})
	}
	if o.Charts != nil {
		// A chart from another GitRepository is read from its tree,
		// resolved as a unit's source is (mapped, or fetched once).
		o.Charts = o.Charts.WithRepository(func(ctx context.Context, ref helm.Reference) (helm.GitTree, error) {
			t, err := sources.ChartTree(ctx, config.SourceRef{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name})
			return helm.GitTree{Dir: t.Root, Revision: t.Revision, Notes: t.Notes}, err
		})
		// A chart's HelmRepository or OCIRepository may be declared
		// anywhere in the configuration (flux/repositories/, the sync's
		// files, another unit's build): read, never applied.
		o.Charts.Artifact = func(ctx context.Context, ref helm.Reference) (helm.GitTree, error) {
			t, err := sources.ChartArtifact(ctx, config.SourceRef{Kind: config.ExternalArtifactKind, Namespace: ref.Namespace, Name: ref.Name})
			return helm.GitTree{Dir: t.Root, Revision: t.Revision}, err
		}
		set := c.Set
		o.Charts.Sources = func(kind, namespace, name string) *config.Source {
			return set.Source(kind, config.Ref{Namespace: namespace, Name: name})
		}
		o.Charts.Lockdown = c.tenancyOf(config.HelmController).charts()
		o.Charts.ControllerNamespace = c.fluxNamespace()
	}
	o.Substitute = maps.Clone(u.Substitute)
	if o.Substitute == nil {
		o.Substitute = map[string]string{}
	}
	maps.Copy(o.Substitute, c.Substitute)
	o.SubstitutePublic = len(c.Substitute) == 0 // the unit's own are in Git
	o.SubstituteAlways = u.SubstituteStrategy == "Always"
	o.Prune, o.Wait, o.Timeout, o.Suspend = u.Prune, u.Wait, u.Timeout, u.Suspend
	o.Ignore = ignoreRules(u.Ignore)
	o.Force = u.Force || c.Base.Force
	if o.HealthChecks, err = healthChecks(u.HealthChecks); err != nil {
		return Unit{}, err
	}
	if o.HealthExprs, err = healthExprs(u.HealthCheckExprs); err != nil {
		return Unit{}, err
	}
	if u.Validation != "" {
		o.Validation = result.Validation(u.Validation)
	}
	o.ServiceAccount, o.ServiceAccountNamespace = cmp.Or(u.SelfAccount, u.ServiceAccountName), cmp.Or(u.ServiceAccountNamespace, u.Ref.Namespace)
	if account, note := kustomize.defaultAccount(u); account != "" {
		o.ServiceAccount = account
		o.Notes = append(o.Notes, note)
	}
	if o.ServiceAccount == kustomizeControllerAccount && o.ServiceAccountNamespace == c.fluxNamespace() {
		// The controller impersonating its own account is the
		// controller: this run stands in for it (its account, with
		// Flux's controllers left out, is not in the cluster).
		o.ServiceAccount = ""
		o.Notes = append(o.Notes, fmt.Sprintf("spec.serviceAccountName %s is kustomize-controller's own account in namespace %s: the unit applies as this run's identity, which stands in for the controller", kustomizeControllerAccount, o.ServiceAccountNamespace))
	}
	o.PruneSelector = u.PruneSelector
	o.Clusters = c.clusterOf
	if by := c.accounts[u.Ref.Namespace+"/"+o.ServiceAccount]; o.ServiceAccount != "" && by != u.Name {
		o.ServiceAccountBy = by
	}
	o.Config, o.DeletionPolicy = c.ID, u.DeletionPolicy
	if u.HelmController {
		o.Charts = nil // applied as they are, for the cluster's helm-controller
	}
	o.Decryption.Keys = slices.Clone(c.Base.Decryption.Keys)
	if u.Decryption != nil && u.Decryption.SecretName != "" {
		o.Decryption.Keys = append(o.Decryption.Keys, c.DecryptionKeys[u.Decryption.SecretName]...)
	}
	if len(u.SubstituteFrom) > 0 {
		o.Variables = c.variables(u, clients, o)
	}
	o.RunFlux, o.FluxControllers = true, c.FluxControllers
	if srcErr == nil {
		if err := withSource(&o, u, src, sources); err != nil {
			return Unit{}, err
		}
	}
	unit := Unit{Cluster: clients, ClusterName: clusterName, Where: where(u), Err: srcErr,
		Event: notify.Source{APIVersion: u.APIVersion, Namespace: u.Ref.Namespace, Name: u.Ref.Name, Labels: u.Meta.Labels, Annotations: u.Meta.Annotations}}
	if len(u.EmittedBy) > 0 {
		unit.Where += ", emitted by " + u.EmittedBy[len(u.EmittedBy)-1].String()
	}
	o.DependsOn, o.UnitTags = nil, u.Tags
	var external map[string]*config.Unit
	exprs, err := readyExprs(u)
	if err != nil {
		return Unit{}, err
	}
	for _, ref := range dependencies(u) {
		dep, inSet := byRef[ref]
		expr := exprs[ref]
		switch {
		case !inSet:
			o.DependsOn = append(o.DependsOn, ref.Name) // another run's: checked in the cluster
			if expr != nil {
				o.ReadyExprs = withReadyExpr(o.ReadyExprs, ref.Name, func(ctx context.Context, inv *inventory.Inventory) error {
					return expr.ready(ctx, kustomizationObject(nil, ref, statusOfInventory(inv)))
				})
			}
		case len(c.Only) > 0 && !slices.Contains(c.Only, dep.Name):
			o.DependsOn = append(o.DependsOn, dep.Name) // another job's: checked where it runs
			if external == nil {
				external = map[string]*config.Unit{}
			}
			external[dep.Name] = dep
			if expr != nil {
				o.ReadyExprs = withReadyExpr(o.ReadyExprs, dep.Name, func(ctx context.Context, inv *inventory.Inventory) error {
					return expr.ready(ctx, kustomizationObject(dep.Document, ref, statusOfInventory(inv)))
				})
			}
		default:
			unit.DependsOn = append(unit.DependsOn, dep.Name)
			if expr != nil {
				if unit.Ready == nil {
					unit.Ready = map[string]func(Outcome) error{}
				}
				unit.Ready[dep.Name] = func(o Outcome) error {
					return expr.ready(ctx, kustomizationObject(dep.Document, ref, statusOfResult(o.Result)))
				}
			}
		}
	}
	if external != nil {
		o.Dependency = c.dependency(external)
	}
	unit.Options = o
	return unit, nil
}

// sourceError is err, resolving unit u's source, as the unit fails with
// it: a *SourceError for a source that does not resolve.
func sourceError(u *config.Unit, err error) error {
	var se *source.Error
	if errors.As(err, &se) {
		return &SourceError{Unit: u, Source: se.Source, Why: se.Why, Fix: cmp.Or(se.Fix, source.FixMapSource), Err: se}
	}
	return err
}

// withSource makes o build unit u from src, the tree its sourceRef
// resolved to (by sources): spec.path in it and, for another tree than
// this checkout, its own files, its own revision, and no revision of
// this checkout to compare with (unless it is an artifact made from this
// checkout, made again at the base).
func withSource(o *pipeline.Options, u *config.Unit, src source.Tree, sources *source.Resolver) error {
	dir, err := unitDir(src.Root, u)
	if err != nil {
		return err
	}
	o.Dir = dir
	if src.Checkout {
		return nil
	}
	o.Snapshot = nil
	o.Revision, o.RevisionTime = src.Revision, src.RevisionTime
	if src.Generated != nil && o.At != nil {
		o.At = sources.ArtifactAt(o.At, src.Generated)
	} else {
		o.Base, o.At = "", nil
	}
	if o.Charts != nil && o.Charts.Checkout != nil && o.Charts.Checkout.Remote != "" {
		// Not this checkout's tree: a chart from a GitRepository of this
		// repository's URL is not in it.
		o.Charts = o.Charts.InCheckout(o.Charts.Checkout.Root)
		o.Charts.Checkout.Remote = ""
	}
	return nil
}

// clusterOf connects to the cluster the kubeConfig Secret named secret
// stands for, as Cluster does for a Kustomization's: a HelmRelease's
// spec.kubeConfig.
// kustomizeControllerAccount is kustomize-controller's ServiceAccount,
// in the namespace Flux runs in, as flux install and Flux Operator
// make it.
const kustomizeControllerAccount = "kustomize-controller"

// fluxNamespace is the namespace Flux runs in: that of Flux's own sync
// (gotk-sync.yaml's Kustomization, a FluxInstance's spec.sync), else
// flux install's default, flux-system.
func (c Config) fluxNamespace() string {
	for _, u := range c.Set.Units {
		if u.Sync {
			return u.Ref.Namespace
		}
	}
	return "flux-system"
}

func (c Config) clusterOf(secret string) (*kube.Clients, error) {
	cl, _, err := c.Cluster(&config.KubeConfig{SecretName: secret})
	return cl, err
}

// dependency reads the inventories of units of the configuration that
// another job runs (external, by name), on their own cluster: a unit may
// depend on one of another cluster.
func (c Config) dependency(external map[string]*config.Unit) func(context.Context, string) (*inventory.Inventory, bool, error) {
	return func(ctx context.Context, name string) (*inventory.Inventory, bool, error) {
		dep := external[name]
		if dep == nil {
			return nil, false, nil
		}
		cl, _, err := c.Cluster(dep.KubeConfig)
		if err != nil || cl == nil {
			return nil, err != nil, err
		}
		inv, err := inventory.Load(ctx, cl.Client, cl.NamespaceOr(c.Base.InventoryNamespace), name)
		return inv, true, err
	}
}

// dependencies are the Kustomizations u waits for: its dependsOn, and
// the one whose build emitted it, which applies what it needs first (its
// namespace, its service account), as in Flux, where it exists only once
// that one has applied it.
func dependencies(u *config.Unit) []config.Ref {
	if len(u.EmittedBy) == 0 {
		return u.DependsOn
	}
	return append(slices.Clone(u.DependsOn), u.EmittedBy[len(u.EmittedBy)-1])
}

// unitDir is the directory unit u builds, spec.path in its source at
// root: an error naming spec.path when it is no directory there.
func unitDir(root string, u *config.Unit) (paths.Dir, error) {
	dir, err := paths.Resolve(filepath.Join(root, filepath.FromSlash(u.Path)), root)
	if err != nil {
		var pe *paths.Error
		if errors.As(err, &pe) {
			pe.Path = u.Path // as the Kustomization has it, not joined to the root
		}
		return dir, fmt.Errorf("spec.path: %w", err)
	}
	return dir, nil
}

// CheckPaths checks that every unit of set that builds from the
// repository at root (as far as tells without its remote: the source of
// Flux's own sync, or flux-system) builds a directory of it, as a run
// would find out; every problem is reported (joined), each naming the
// unit and where it is defined. Units of other sources are checked when
// run.
func CheckPaths(root string, set *config.Set) error {
	r := source.NewResolver(source.Options{Set: set, Root: root})
	var errs []error
	for _, u := range set.Units {
		if u.Source.Kind != config.GitRepositoryKind || len(u.Refused) > 0 {
			continue // refused when it runs
		}
		if src, err := r.Resolve(context.Background(), u); err != nil || !src.Checkout {
			continue
		}
		if _, err := unitDir(root, u); err != nil {
			errs = append(errs, fmt.Errorf("unit %s (%s:%d): %w", u.Name, u.File, u.Line, err))
		}
	}
	return errors.Join(errs...)
}

// images are the unit's overrides with the run's on top: one of the same
// name replaces the unit's.
func images(own []config.Image, run []build.Image) []build.Image {
	out := make([]build.Image, 0, len(own)+len(run))
	for _, i := range own {
		if !slices.ContainsFunc(run, func(r build.Image) bool { return r.Name == i.Name }) {
			out = append(out, build.Image{Name: i.Name, NewName: i.NewName, NewTag: i.NewTag, Digest: i.Digest})
		}
	}
	return append(out, run...)
}

func patches(in []config.Patch) []build.Patch {
	var out []build.Patch
	for _, p := range in {
		bp := build.Patch{Patch: p.Patch}
		if t := p.Target; t != nil {
			bp.Target = &build.Target{Group: t.Group, Version: t.Version, Kind: t.Kind, Name: t.Name, Namespace: t.Namespace,
				LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector}
		}
		out = append(out, bp)
	}
	return out
}

func healthChecks(in []config.HealthCheck) ([]object.ID, error) {
	var out []object.ID
	for i, h := range in {
		gv, err := schema.ParseGroupVersion(h.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("spec.healthChecks[%d].apiVersion %q: %w", i, h.APIVersion, err)
		}
		out = append(out, object.ID{Group: gv.Group, Kind: h.Kind, Namespace: h.Namespace, Name: h.Name})
	}
	return out, nil
}

// ignoreRules are spec.ignore's rules as fluxcd/pkg/ssa takes them.
func ignoreRules(in []config.IgnoreRule) []jsondiff.IgnoreRule {
	var out []jsondiff.IgnoreRule
	for _, r := range in {
		rule := jsondiff.IgnoreRule{Paths: r.Paths}
		if t := r.Target; t != nil {
			rule.Selector = &jsondiff.Selector{Group: t.Group, Version: t.Version, Kind: t.Kind, Name: t.Name, Namespace: t.Namespace,
				LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector}
		}
		out = append(out, rule)
	}
	return out
}

// healthExprs parses spec.healthCheckExprs (see health.Expressions).
func healthExprs(in []config.HealthCheckExpr) (health.Evaluators, error) {
	if len(in) == 0 {
		return nil, nil
	}
	exprs := make([]health.Expressions, len(in))
	for i, e := range in {
		exprs[i] = health.Expressions{APIVersion: e.APIVersion, Kind: e.Kind, Current: e.Current, InProgress: e.InProgress, Failed: e.Failed}
	}
	evs, err := health.ParseExpressions(exprs)
	if err != nil {
		return nil, fmt.Errorf("spec.%w", err)
	}
	return evs, nil
}

// ConfigID names a configuration: the repository's remote (without
// credentials) and the directory read, else the directory alone.
func ConfigID(remote, rel string) string {
	rel = strings.Trim(filepath.ToSlash(rel), "/")
	if remote == "" {
		return rel
	}
	return remote + "//" + rel
}
