package units

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/danger"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/notify"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Unit is one unit of a run, ready for the engine.
type Unit struct {
	// Options run the unit; Options.DependsOn are its dependencies outside
	// this run, which it checks in its cluster.
	Options pipeline.Options
	// Where the unit is defined (file:line), for errors; may be empty.
	Where string
	// DependsOn names the units of this run it waits for.
	DependsOn []string
	// Cluster is where the unit is deployed.
	Cluster *kube.Clients
	// ClusterName names the cluster in messages ("" for the default one).
	ClusterName string
	// Ready, by dependency of this run, replaces that the dependency is
	// Ready with its readyExpr (see readyExpr).
	Ready map[string]func(Outcome) error
	// Event is the unit's Kustomization as its notification events name
	// it.
	Event notify.Source
	// Err, when set, says why the unit cannot be built at all (a
	// *SourceError): it fails with ArtifactFailed when its turn comes, and
	// nothing is built or applied in its name. A *DeferredError is a
	// source resolved at the unit's turn, by resolve.
	Err error
	// resolve, for a unit whose source is deferred (see deferSources),
	// resolves it at the unit's turn and completes its options.
	resolve func(context.Context, pipeline.Options) (pipeline.Options, error)
}

// runOptions say how to run the units.
type runOptions struct {
	Mode result.Mode // apply, diff or drift
	// Correct, in drift mode, applies the units that drifted.
	Correct bool
	// Parallel bounds the units run at once; 0 means DefaultParallel.
	Parallel int
	// Progress receives every unit's progress lines, each prefixed with
	// the unit's name; nil discards.
	Progress io.Writer
	// AbortOnError starts no unit once one has failed (see
	// Spec.AbortOnError).
	AbortOnError bool
	// Notifier posts each unit's events to the Providers of the Alerts
	// that take them; nil posts none.
	Notifier *notify.Notifier
}

// runUnits runs units in dependency order, independent ones in parallel: each
// once every unit it depends on in this run is Ready; a unit whose
// dependency is not is recorded as DependencyNotReady and not run, and
// unrelated units go on. A dependency cycle, a dependency on a unit
// neither in this run nor deployed in the unit's cluster, or two units of
// one name in one cluster are errors before anything is written.
func runUnits(ctx context.Context, units []Unit, opts runOptions) (*result.Set, error) {
	start := time.Now()
	if opts.Parallel <= 0 {
		opts.Parallel = DefaultParallel
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	g, err := graph(units)
	if err != nil {
		return nil, err
	}
	if err := checkExternal(ctx, units); err != nil {
		return nil, err
	}
	earlier := &provided{by: map[int]pipeline.Prerequisites{}}
	posts := newNotifications(opts.Notifier)
	// Aborting stops the scheduling, not the units running: they finish.
	scheduling, abort := context.WithCancel(ctx)
	defer abort()
	var abortMu sync.Mutex
	abortedBy := ""
	// deferred are the units a run that writes nothing skipped for a
	// source resolved only once an earlier unit is applied: their
	// dependents are skipped for that reason too, not as failed.
	var deferredMu sync.Mutex
	deferred := map[string]bool{}
	out := g.Run(scheduling, opts.Parallel,
		func(_ context.Context, i int) Outcome {
			u := units[i]
			progress := prefixed(opts.Progress, u.Options.Name)
			var res *result.Result
			if u.resolve != nil && (opts.Mode.Writes() && (opts.Mode != result.ModeDrift || opts.Correct)) {
				// Its source's credentials come from a unit applied
				// before it: resolved now (see deferSources).
				if o, err := u.resolve(ctx, u.Options); err != nil {
					u.Err = err
				} else {
					u.Options, u.Err = o, nil
				}
			}
			if u.Err != nil {
				res = unbuildable(u, opts.Mode)
			} else {
				if opts.Mode == result.ModeDiff {
					u.Options.Earlier = earlier.union(g.Ancestors(i))
					u.Options.Provide = func(p pipeline.Prerequisites) { earlier.add(i, p) }
				}
				u.Options.Progress = progress
				res, _ = runOne(ctx, u, opts)
			}
			if res.Reason == result.ReasonSourceDeferred {
				deferredMu.Lock()
				deferred[u.Options.Name] = true
				deferredMu.Unlock()
			}
			posts.post(ctx, u, res, progress)
			if opts.AbortOnError && res.Failed() {
				abortMu.Lock()
				if abortedBy == "" {
					abortedBy = u.Options.Name
					fmt.Fprintf(orDiscard(opts.Progress), "unit %s failed: no other unit starts (abort on error)\n", abortedBy)
				}
				abortMu.Unlock()
				abort()
			}
			return Outcome{Result: res, Satisfied: res.Ready}
		},
		func(i int, blockers []string) Outcome {
			u := units[i]
			if len(blockers) == 0 {
				res := cancelled(u, opts.Mode)
				abortMu.Lock()
				if abortedBy != "" && ctx.Err() == nil {
					res.Message = fmt.Sprintf("not started: unit %s failed, and the run stops at the first failure (abort on error)", abortedBy)
				}
				abortMu.Unlock()
				return Outcome{Result: res}
			}
			u.Options.Progress = prefixed(opts.Progress, u.Options.Name)
			deferredMu.Lock()
			afterDeferred := !slices.ContainsFunc(blockers, func(b string) bool { return !deferred[b] })
			if afterDeferred {
				deferred[u.Options.Name] = true
			}
			deferredMu.Unlock()
			if afterDeferred {
				res := &result.Result{Unit: u.Options.Name, Mode: opts.Mode, Revision: u.Options.Revision, Entries: []result.Entry{}, StartedAt: time.Now().UTC(),
					Reason: result.ReasonSourceDeferred, Message: fmt.Sprintf("not built: it runs after %s, whose source is resolved only once the unit that creates its credentials has been applied, which this run does not do", strings.Join(blockers, ", "))}
				posts.post(ctx, u, res, u.Options.Progress)
				return Outcome{Result: res}
			}
			err := fmt.Errorf("skipped: dependency %s of this run is not ready", strings.Join(blockers, ", "))
			mode := opts.Mode
			if mode == result.ModeDrift && !opts.Correct {
				mode = result.ModeDiff // a drift report writes nothing
			}
			res := pipeline.Blocked(ctx, u.Cluster, u.Options, mode, err)
			res.Mode = opts.Mode
			posts.post(ctx, u, res, u.Options.Progress)
			return Outcome{Result: res}
		})
	posts.wait()
	set := &result.Set{Mode: opts.Mode, StartedAt: start.UTC(), Ready: true}
	for _, o := range out {
		set.Units = append(set.Units, o.Result)
		if o.Result.Failed() {
			set.Ready = false
		}
		if set.Revision == "" {
			set.Revision = o.Result.Revision
		}
	}
	// A Namespace one unit creates while another deletes one is a move.
	danger.MarkReplacedNamespaces(set.Units...)
	set.Duration = time.Since(start).Round(time.Millisecond).String()
	return set, nil
}

// provided is what each unit of a diff said it would create (see
// pipeline.Prerequisites), by its index; safe for concurrent use.
type provided struct {
	mu sync.Mutex
	by map[int]pipeline.Prerequisites
}

func (p *provided) add(i int, ps pipeline.Prerequisites) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.by[i] = ps
}

// union is what the units of indexes would create; nil when nothing.
func (p *provided) union(indexes []int) *pipeline.Prerequisites {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out pipeline.Prerequisites
	for _, i := range indexes {
		out.Add(p.by[i])
	}
	return &out
}

func runOne(ctx context.Context, u Unit, opts runOptions) (*result.Result, error) {
	switch opts.Mode {
	case result.ModeApply:
		return pipeline.Apply(ctx, u.Cluster, u.Options)
	case result.ModeDiff:
		return pipeline.Diff(ctx, u.Cluster, u.Options)
	case result.ModeDrift:
		return pipeline.Drift(ctx, u.Cluster, u.Options, opts.Correct)
	}
	return nil, fmt.Errorf("units: mode %s is not run over many units", opts.Mode)
}

// graph is the units' dependency graph. Unit names are unique in a run,
// whatever cluster each is on (a configuration names them so): a unit may
// depend on one in another cluster.
func graph(units []Unit) (*Graph, error) {
	nodes := make([]Node, len(units))
	for i, u := range units {
		nodes[i] = Node{Name: u.Options.Name, DependsOn: u.DependsOn, Where: u.Where, Ready: u.Ready}
	}
	return NewGraph(nodes)
}

// display names a unit and its cluster in messages.
func display(u Unit) string {
	if u.ClusterName == "" {
		return u.Options.Name
	}
	return u.Options.Name + " (cluster " + u.ClusterName + ")"
}

// defined names a unit and its cluster, with where it is defined, in
// errors about its definition.
func defined(u Unit) string {
	if u.Where == "" {
		return display(u)
	}
	return display(u) + " (" + u.Where + ")"
}

// checkExternal makes sure every dependency outside the run is deployed
// in the unit's cluster: that is how separate jobs and workflows order
// themselves. Whether it is Ready is the unit's to check when its turn
// comes.
func checkExternal(ctx context.Context, units []Unit) error {
	var errs []error
	for _, u := range units {
		if u.Err != nil && u.resolve == nil {
			continue // it will not run
		}
		ns := u.Cluster.NamespaceOr(u.Options.InventoryNamespace)
		for _, d := range u.Options.DependsOn {
			var inv *inventory.Inventory
			handled, err := false, error(nil)
			if u.Options.Dependency != nil {
				inv, handled, err = u.Options.Dependency(ctx, d)
			}
			if !handled {
				inv, err = inventory.Load(ctx, u.Cluster.Client, ns, d)
			}
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("unit %s depends on %s: %w", defined(u), d, err))
			case inv == nil && u.Options.WaitForDependencies > 0:
				// Another job may not have deployed it yet: the unit
				// waits for it when its turn comes.
			case inv == nil:
				errs = append(errs, fmt.Errorf("unit %s depends on %s, which is neither in this run nor deployed (no inventory in namespace %s)", defined(u), d, ns))
			}
		}
	}
	return errors.Join(errs...)
}

// cancelled is the result of a unit the run never started.
func cancelled(u Unit, mode result.Mode) *result.Result {
	return &result.Result{
		Unit: u.Options.Name, Mode: mode, Revision: u.Options.Revision, Entries: []result.Entry{},
		Reason: result.ReasonCancelled, Message: "not started: the run was cancelled", StartedAt: time.Now().UTC(),
	}
}

// unbuildable is the result of a unit whose source cannot be resolved,
// or that is refused (u.Err): failed, nothing built, nothing written,
// not even its inventory (as a failure to get the artifact is not, in a
// run). A refused unit fails with BuildFailed at its Kustomization's
// problems (FileErrors), as a build that fails does.
func unbuildable(u Unit, mode result.Mode) *result.Result {
	res := &result.Result{
		Unit: u.Options.Name, Mode: mode, Revision: u.Options.Revision, Entries: []result.Entry{},
		Reason: result.ReasonArtifactFailed, Message: u.Err.Error(), StartedAt: time.Now().UTC(),
	}
	var se *SourceError
	if errors.As(u.Err, &se) {
		res.Fix = string(se.Fix)
	}
	var denied *config.AccessDeniedError
	if errors.As(u.Err, &denied) {
		res.Reason = result.ReasonAccessDenied
	}
	var de *DeferredError
	if errors.As(u.Err, &de) {
		// A run that writes nothing: the unit that creates what the
		// source needs is not applied (see deferSources).
		res.Reason, res.Message = result.ReasonSourceDeferred, de.notApplied()
	}
	var refused *RefusedError
	if errors.As(u.Err, &refused) {
		res.Reason = result.ReasonBuildFailed
		for _, p := range refused.Problems {
			res.FileErrors = append(res.FileErrors, result.FileError{File: p.File, Line: p.Line, Message: p.Error()})
		}
	}
	return res
}
