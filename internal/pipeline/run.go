package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/danger"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/lock"
	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source"
)

// Failure is a failed run: the Flux reason it ends with and the cause.
type Failure struct {
	Reason result.Reason
	Err    error
	// Fix, when set, is the option that gets a run past this failure
	// (force, for an immutable field): the front end names its own flag
	// or input for it.
	Fix Fix
}

// Fix is an option that gets a run past a failure.
type Fix string

// The options a Failure may name as its Fix.
const (
	FixForce            Fix = "force"
	FixForcePrune       Fix = "force-prune"
	FixAllowRemoteBases Fix = "allow-remote-bases"
	// A source's (see source.Fix): map a checked-out directory to it,
	// fetch sources, give a GitRepository's or an OCIRepository's Secret.
	FixMapSource    Fix = Fix(source.FixMapSource)
	FixFetchSources Fix = Fix(source.FixFetchSources)
	FixGitSecret    Fix = Fix(source.FixGitSecret)
	FixOCISecret    Fix = Fix(source.FixOCISecret)
	// FixGitHubToken: a ResourceSetInputProvider of a GitHub type needs
	// the run's GitHub token.
	FixGitHubToken Fix = "github-token"
)

func (f *Failure) Error() string { return f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

func failure(reason result.Reason, err error) *Failure {
	var denied interface{ AccessDenied() bool }
	if errors.As(err, &denied) && denied.AccessDenied() {
		// Flux's lockdown refused a reference (config.AccessDeniedError):
		// the controllers' own reason.
		reason = result.ReasonAccessDenied
	}
	return &Failure{Reason: reason, Err: err, Fix: fixFor(err)}
}

// fixFor is the option that gets past err, if one does.
func fixFor(err error) Fix {
	switch {
	case apply.NeedsRecreate(err):
		return FixForce
	case errors.Is(err, build.ErrRemoteBase):
		return FixAllowRemoteBases
	case errors.As(err, new(*prune.BudgetError)):
		return FixForcePrune
	case source.FixOf(err) != "":
		return Fix(source.FixOf(err))
	case errors.Is(err, resourceset.ErrNoGitHub):
		return FixGitHubToken
	}
	return ""
}

// run is the state of one unit's run.
type run struct {
	// given are the options the run was made with; opts are those it
	// runs with (Mask and Progress wrapped, see newRun).
	given Options
	opts  Options
	mode  result.Mode
	cl    cluster
	// render builds the unit; Render, except in tests.
	render func(context.Context, Options) (*Rendered, error)
	// ns holds the inventory; objNS is given to objects that name no
	// namespace; owner are the labels marking objects as the unit's.
	ns, objNS string
	owner     map[string]string

	// last is the inventory as the run found it (nil for a unit that
	// never ran); it never changes. saved is the inventory as the cluster
	// holds it now: last, then whatever each write of this run left.
	last, saved *inventory.Inventory
	// loaded is set once last was read: only then may a failure be
	// recorded, or an unreadable inventory would be overwritten.
	loaded bool
	// asCaller says the diff runs as the caller, not as the unit's
	// service account, which an earlier unit of the run creates (see
	// Prerequisites).
	asCaller bool
	// release gives the unit's lock back; nil when not held.
	release func()
	// foreign are entries another writer recorded while this run went on
	// (merged into one of its writes on a conflict, see inventory.Save):
	// every later write keeps them too, so that even two runs without the
	// lock never lose an object.
	foreign []inventory.Entry

	res   *result.Result
	start time.Time
	// inputs are what this run's build read; recorded once it succeeds.
	inputs *inventory.Inputs
	// held are the inventory entries of the releases the run's tags leave
	// out (see hold): kept, neither applied nor pruned; heldRecords, the
	// unit's records of those releases, kept as they were.
	held        []inventory.Entry
	heldRecords []inventory.Release
	// releases are the Helm releases this run's build rendered; recorded
	// once it succeeds (nil: not built, the records stay as they were).
	releases []inventory.Release
	// chartHealth are the HelmReleases' health expressions of this
	// run's build (see Rendered.Health).
	chartHealth health.Evaluators
	// moved is set once the run found objects of the last apply changed
	// in the cluster since. movedAt is the inventory's resourceVersion
	// when a run of the same unit before this one found that (see
	// applyUnlocked): objects cannot move back, so unless the inventory
	// changed since, they are not checked again.
	moved   bool
	movedAt string
	// healthy is the health key (see healthKey) under which this run
	// found every object it waited for ready, recorded with a Ready
	// status; unmovedHealthy are the objects of the last apply, untouched
	// since it found them ready under the same key: they need not be
	// waited for again (see waitFor).
	healthy        string
	unmovedHealthy map[object.ID]bool
	// prebuilt is what applyUnlocked rendered of a unit with Helm
	// releases, for the run under the lock to take (see fresh).
	prebuilt *prebuilt
	// secrets are the values this run handed to opts.Mask: decrypted,
	// or substituted from Secrets. Diffs mask the fields holding them.
	secrets *secretValues
}

// secretValues collects secret values; safe for concurrent use.
type secretValues struct {
	mu     sync.Mutex
	values []string
}

func (s *secretValues) add(v []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values = append(s.values, v...)
}

func (s *secretValues) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.values)
}

func newRun(opts Options, mode result.Mode) *run {
	given := opts
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	start := time.Now()
	secrets := &secretValues{}
	// Every value masked is also known to the run, for its diffs.
	mask := opts.Mask
	opts.Mask = func(v []string) {
		if len(v) == 0 {
			return
		}
		secrets.add(v)
		if mask != nil {
			mask(v)
		}
	}
	return &run{
		given: given, opts: opts, mode: mode, render: Render, start: start, secrets: secrets,
		res: &result.Result{Unit: opts.Name, Mode: mode, Revision: opts.Revision, RollbackOf: opts.RollbackOf, StartedAt: start.UTC(), Entries: []result.Entry{}, Notes: slices.Clone(opts.Notes)},
	}
}

// start connects a run to the cluster c, takes the unit's lock if the run
// writes, and loads the unit's inventory. The run goes on in the context
// it returns, which ends if the lock is lost; r.end gives the lock back.
func start(ctx context.Context, c *kube.Clients, opts Options, mode result.Mode) (*run, context.Context, error) {
	r, err := open(c, opts, mode)
	if err != nil {
		return r, ctx, err
	}
	return r.begin(ctx, r.cl)
}

// open makes a run of the unit on the cluster c, connected but with
// nothing read yet, nor its lock taken.
func open(c *kube.Clients, opts Options, mode result.Mode) (*run, error) {
	r := newRun(opts, mode)
	if err := inventory.ValidateName(opts.Name); err != nil {
		return r, failure(result.ReasonArtifactFailed, err)
	}
	r.ns = c.NamespaceOr(opts.InventoryNamespace)
	r.objNS = c.NamespaceOr(opts.Namespace)
	r.owner = apply.OwnerLabels(opts.Name, r.ns)
	as := appliesAs(opts)
	if why := opts.Earlier.unready(or(as.Namespace, r.ns), as.Name); why != "" && !mode.Writes() {
		// A diff: what an earlier unit applies first does not exist.
		r.note("dry-run as the caller, not as ServiceAccount %s/%s: %s; its rights are checked once it exists", or(as.Namespace, r.ns), as.Name, why)
		opts.ServiceAccount, r.asCaller = "", true
	}
	cl, err := connect(c, r.ns, r.owner, opts)
	if err != nil {
		return r, failure(result.ReasonArtifactFailed, err)
	}
	r.cl = cl
	return r, nil
}

// begin takes the unit's lock through cl if the run writes, then loads
// its last inventory. Failing either ends the run before anything is
// written.
func (r *run) begin(ctx context.Context, cl cluster) (*run, context.Context, error) {
	r.cl = cl
	if r.mode.Writes() {
		held, release, err := r.lock(ctx)
		if err != nil {
			return r, ctx, err
		}
		ctx, r.release = held, release
	}
	last, err := cl.store.Load(ctx, r.ns, r.opts.Name)
	if err != nil {
		return r, ctx, failure(result.ReasonArtifactFailed, err)
	}
	r.found(last)
	if last != nil && last.InputsErr != nil {
		r.progress("warning: %v: the unit is built and checked in full (the next successful apply records them again)", last.InputsErr)
	}
	return r, ctx, nil
}

// lock waits for and takes the unit's lock. Its failure's reason is
// Locked when another run held the lock; a cluster that could not be
// asked is not that.
func (r *run) lock(ctx context.Context) (context.Context, func(), error) {
	held, release, err := r.cl.locker.Lock(ctx, r.ns, r.opts.Name)
	if err != nil {
		reason := result.ReasonArtifactFailed
		var busy *lock.HeldError
		if errors.As(err, &busy) {
			reason = result.ReasonLocked
		}
		return nil, nil, failure(reason, err)
	}
	return held, release, nil
}

// found keeps last, the unit's inventory as the run read it.
func (r *run) found(last *inventory.Inventory) {
	r.last, r.saved, r.loaded = last, last, true
	r.res.AppliedRevision = r.lastStatus().LastAppliedRevision
	if rt := r.cl.routes; rt != nil && last != nil {
		// Until a build says otherwise, each object is where, and
		// whose, the last apply recorded it.
		of := map[object.ID]target{}
		for _, e := range last.Entries {
			if t := entryTarget(e); !t.own() {
				of[e.ID] = t
			}
		}
		rt.route(of, nil, nil, nil)
	}
}

// end gives the unit's lock back, if the run holds it.
func (r *run) end() {
	if r.release != nil {
		r.release()
		r.release = nil
	}
}

// report puts the entries a step returned on the run's result, after
// those of the steps before it.
func (r *run) report(entries []result.Entry) {
	r.res.Entries = append(r.res.Entries, entries...)
}

func (r *run) progress(format string, args ...any) {
	fmt.Fprintf(r.opts.Progress, format+"\n", args...)
}

// status is the inventory status of an attempt ending with reason. What
// was said of the unit (suspended, pinned) and the last applied revision
// carry over; a successful apply records its revision, when it was
// committed, and the configuration it came from.
func (r *run) status(reason result.Reason, message string, ready bool) *inventory.Status {
	var st inventory.Status
	if r.saved != nil {
		st = r.saved.Status
	}
	st.LastAttemptedRevision = r.opts.Revision
	cond := "False"
	switch {
	case ready:
		cond = "True"
		st.LastAppliedRevision = r.opts.Revision
		st.LastAppliedRevisionTime = nil
		if !r.opts.RevisionTime.IsZero() {
			t := r.opts.RevisionTime.UTC()
			st.LastAppliedRevisionTime = &t
		}
		st.Config, st.DeletionPolicy = r.opts.Config, r.opts.DeletionPolicy
		st.Health = r.healthy
		if r.releases != nil {
			st.Releases = r.releases
		}
	case reason == result.ReasonProgressing:
		cond = "Unknown"
	}
	st.Ready = inventory.Condition{Status: cond, Reason: reason, Message: message, LastTransitionTime: time.Now().UTC()}
	return &st
}

// record writes the unit's inventory: entries, with st if given, else the
// status last saved. A run that may not write (diff) records nothing.
func (r *run) record(ctx context.Context, entries []inventory.Entry, st *inventory.Status) error {
	if !r.mode.Writes() {
		return nil
	}
	inv := &inventory.Inventory{Name: r.opts.Name, Namespace: r.ns, Entries: inventory.Union(r.foreign, entries)}
	switch {
	case st != nil:
		inv.Status = *st
	case r.saved != nil:
		inv.Status = r.saved.Status
	}
	if r.saved != nil {
		inv.ResourceVersion = r.saved.ResourceVersion
	}
	if inv.Status.Ready.Status == "True" {
		inv.Inputs = r.inputs
	}
	saved, err := r.cl.store.Save(ctx, inv)
	if err != nil {
		return err
	}
	r.foreign = inventory.Union(r.foreign, inventory.Diff(saved.Entries, inv.Entries))
	r.saved = saved
	return nil
}

// fail ends the run with err's reason. The inventory keeps the entries
// last saved (what the cluster may hold of the unit) and records the
// attempt, unless the inventory was never read, the run does not write,
// or the unit has none: a unit that never applied anything leaves no
// inventory behind (a failed first run of many units would leave one
// Secret each, for no object).
func (r *run) fail(ctx context.Context, err error) (*result.Result, error) {
	if cause := context.Cause(ctx); ctx.Err() != nil && cause != ctx.Err() {
		err = fmt.Errorf("%w (%v)", err, cause) // e.g. the lock was lost
	}
	var f *Failure
	if !errors.As(err, &f) {
		f = failure(result.ReasonApplyFailed, err)
	}
	r.res.Ready, r.res.Reason, r.res.Message, r.res.Fix = false, f.Reason, err.Error(), string(f.Fix)
	r.res.FileErrors = fileErrors(err)
	r.res.Diagnostics = health.DiagnosticsOf(err)
	r.finish()
	if r.res.Message != err.Error() {
		err = &redactedError{err: err, msg: r.res.Message}
	}
	if r.loaded && r.saved != nil && r.mode.Writes() && f.Reason != result.ReasonArtifactFailed {
		st := r.status(f.Reason, r.res.Message, false)
		r.history(st, entriesOf(r.saved))
		if serr := r.record(context.WithoutCancel(ctx), entriesOf(r.saved), st); serr != nil {
			return r.res, fmt.Errorf("%w (and recording the failure in the inventory failed too: %v)", err, serr)
		}
	}
	return r.res, err
}

// history adds the run to st's history: an apply's outcome, with what it
// leaves the unit owning (entries).
func (r *run) history(st *inventory.Status, entries []inventory.Entry) {
	if r.mode != result.ModeApply {
		return
	}
	counts := *r.res
	counts.Tally()
	rev := st.Record(inventory.Revision{
		SourceRevision: r.opts.Revision, Time: time.Now().UTC().Truncate(time.Second),
		Ready: st.Ready.Status == "True", Reason: st.Ready.Reason, Counts: counts.Counts,
		Digest: inventory.EntriesDigest(entries), By: r.opts.RunBy, RunURL: r.opts.RunURL, RollbackOf: r.opts.RollbackOf,
	})
	r.res.HistoryRevision = rev.Revision
}

// succeed ends an apply: entries become the inventory, Ready.
func (r *run) succeed(ctx context.Context, entries []inventory.Entry) (*result.Result, error) {
	message := "applied revision " + revisionOr(r.opts.Revision)
	if r.opts.RollbackOf > 0 {
		message += fmt.Sprintf(": a rollback to revision %d of the unit's history", r.opts.RollbackOf)
	}
	st := r.status(result.ReasonApplySucceed, message, true)
	r.history(st, entries)
	if err := r.record(ctx, entries, st); err != nil {
		return r.fail(ctx, failure(result.ReasonApplyFailed, err))
	}
	return r.done(result.ReasonApplySucceed, message)
}

// done ends the run successfully with reason.
func (r *run) done(reason result.Reason, message string) (*result.Result, error) {
	r.res.Ready, r.res.Reason, r.res.Message = true, reason, message
	r.finish()
	return r.res, nil
}

func (r *run) finish() {
	danger.MarkReplacedNamespaces(r.res)
	r.redact()
	r.res.NameReleases()
	r.res.Tally()
	r.res.Duration = time.Since(r.start).Round(time.Millisecond).String()
}

// entriesOf returns inv's entries; none for a unit that never ran.
func entriesOf(inv *inventory.Inventory) []inventory.Entry {
	if inv == nil {
		return nil
	}
	return inv.Entries
}

func revisionOr(rev string) string {
	return or(rev, "(unknown)")
}

func or[T comparable](s, def T) T {
	var zero T
	if s == zero {
		return def
	}
	return s
}

// redact hides the run's secret values, in every form the masker knows,
// in the messages of its result before anything shows or records them:
// an API server's error quotes what it refuses (a label made of a
// substituted value Go-quoted, a Job's whole template as JSON), and the
// inventory keeps the message for status, which runs without any key.
// Diffs need no such pass: they mask the fields holding secrets.
func (r *run) redact() {
	secrets := r.secrets.list()
	if len(secrets) == 0 {
		return
	}
	m := mask.New()
	m.Add(secrets...)
	r.res.Message = m.String(r.res.Message)
	for i := range r.res.Entries {
		r.res.Entries[i].Reason = m.String(r.res.Entries[i].Reason)
	}
	for i := range r.res.FileErrors {
		r.res.FileErrors[i].Message = m.String(r.res.FileErrors[i].Message)
	}
	for i := range r.res.Diagnostics {
		r.res.Diagnostics[i].Mask(m.String)
	}
	for i := range r.res.Remediations {
		r.res.Remediations[i].Error = m.String(r.res.Remediations[i].Error)
	}
}

// redactedError is err with secret values hidden in its message; it
// unwraps to err, for callers that branch on it.
type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
