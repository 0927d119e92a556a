package action

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

// spec is the unit as the inputs describe it.
func (r *runner) spec() spec.Unit {
	in := r.in
	s := spec.Default()
	s.Name, s.InventoryNamespace, s.DependsOn = in.Name, in.InventoryNS, in.DependsOn
	s.Path = in.Path
	if in.Path != "" && !filepath.IsAbs(in.Path) && r.ev.WorkspaceDir != "" {
		s.Path = filepath.Join(r.ev.WorkspaceDir, in.Path)
	}
	s.Revision = r.ev.SHA
	s.TargetNamespace, s.Namespace, s.Images, s.Substitute = in.TargetNamespace, in.Namespace, in.Images, in.Substitute
	s.AgeKeys, s.PGPKeys = []string{in.SopsAgeKey}, []string{in.SopsPGPKey}
	s.HelmController, s.ChartCache, s.KubeVersion = in.HelmController, in.ChartCache, in.KubeVersion
	s.RemoveHelmReleaseRecords = in.HelmRecords
	s.Fold, s.ResolveImages = in.Fold, in.ResolveImages
	if s.ChartCache != "" && !filepath.IsAbs(s.ChartCache) && r.ev.WorkspaceDir != "" {
		s.ChartCache = filepath.Join(r.ev.WorkspaceDir, s.ChartCache)
	}
	s.SchemaDir = in.SchemaDir
	if s.SchemaDir != "" && !filepath.IsAbs(s.SchemaDir) && r.ev.WorkspaceDir != "" {
		s.SchemaDir = filepath.Join(r.ev.WorkspaceDir, s.SchemaDir)
	}
	s.Force, s.Prune, s.Wait, s.Timeout, s.ServiceAccount = in.Force, in.Prune, in.Wait, in.Timeout, in.ServiceAccount
	s.Recheck = in.Recheck
	s.MaxPrune, s.Protect, s.MaxCollect, s.ForcePrune = in.MaxPrune, in.Protect, in.MaxCollect, r.pruneAllowed
	s.AllowRollback, s.LockTimeout, s.Holder = in.AllowRollback, in.LockTimeout, r.ev.RunURL
	s.IncludeTags, s.ExcludeTags = in.IncludeTags, in.ExcludeTags
	s.WaitForDependencies = in.WaitForDependencies
	if in.Validation != "" {
		s.Validation = string(in.Validation)
	}
	return s
}

// options turns the inputs into engine options; a bad value is an error
// naming its input.
func (r *runner) options(ctx context.Context) (pipeline.Options, error) {
	needs := spec.NeedName | spec.NeedPath
	if r.mode == result.ModeDelete {
		needs = spec.NeedName
	}
	return r.optionsOf(ctx, r.spec(), needs)
}

// optionsOf is options for a spec the run adjusted.
func (r *runner) optionsOf(ctx context.Context, s spec.Unit, needs spec.Needs) (pipeline.Options, error) {
	o, err := s.Options(ctx, needs, r.env.Getenv)
	if err != nil {
		return o, inputErrors(spec.OptionErrors(err))
	}
	r.maskValues(o.Decryption.Secrets()...)
	o.Decryption.HTTPClient = r.env.CloudClient
	o.Progress = r.log
	o.Mask = func(v []string) { r.maskValues(v...) }
	o.ResourceSets = resourceset.Options{GitHub: r.github(), Cache: &resourceset.Cache{}}
	return o, nil
}

// inputErrors says each bad option by its input.
func inputErrors(errs []*spec.OptionError) error {
	msgs := make([]string, len(errs))
	for i, oe := range errs {
		msgs[i] = fmt.Sprintf("input '%s': %v", inputName(oe.Option), oe.Err)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// inputName is the input that sets an engine option.
func inputName(o spec.Option) string {
	switch o {
	case spec.OptImage:
		return "images"
	case spec.OptAgeKeyFile:
		return "sops-age-key (or SOPS_AGE_KEY_FILE)"
	case spec.OptTags:
		return "include-tags, exclude-tags"
	}
	return string(o)
}

func (r *runner) runMode(ctx context.Context) (*result.Result, error) {
	opts, err := r.options(ctx)
	if err != nil {
		return nil, err
	}
	clients, cleanup, err := r.access().connect(ctx)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if clients == nil {
		return r.offlineDiff(ctx, opts)
	}
	r.threeWay(&opts)
	switch r.mode {
	case result.ModeDiff:
		return r.group("diff "+opts.Name, func() (*result.Result, error) { return pipeline.Diff(ctx, clients, opts) })
	case result.ModeApply:
		opts.At = r.unitAt // a failed Helm upgrade rolls back to the revision last applied
		if r.in.Mode == ModeRollback {
			return r.rollback(ctx, clients, opts)
		}
		return r.group("apply "+opts.Name, func() (*result.Result, error) { return pipeline.Apply(ctx, clients, opts) })
	case result.ModeDelete:
		return r.group("delete "+opts.Name, func() (*result.Result, error) { return pipeline.Delete(ctx, clients, opts) })
	case result.ModeDrift:
		return r.detectDrift(ctx, clients, opts)
	}
	return nil, fmt.Errorf("unknown mode %q", r.mode)
}

// group runs step inside a collapsible log group. An engine failure is part
// of the result, not an error of the action.
func (r *runner) group(title string, step func() (*result.Result, error)) (*result.Result, error) {
	r.log.Flush()
	r.gha.Group("kustomize-deploy: " + title)
	start := time.Now()
	res, err := step()
	r.log.Flush()
	r.gha.EndGroup()
	if res == nil {
		return nil, err
	}
	fmt.Fprintf(r.log, "%s: %s (%s)\n", title, res.Reason, time.Since(start).Round(time.Millisecond))
	var f *pipeline.Failure
	if errors.As(err, &f) {
		r.notice(f.Fix)
	}
	return res, nil
}

// notice names the input that gets a run past a failure (fix), if any.
func (r *runner) notice(fix pipeline.Fix) {
	switch fix {
	case pipeline.FixForce:
		r.gha.Noticef("set the input force: true to recreate objects whose immutable fields changed")
	case pipeline.FixGitHubToken:
		r.gha.Noticef("the input github-token is empty: a GitRepository with provider github is fetched with it, and a ResourceSetInputProvider of a GitHub type lists the repository's pull requests, branches or tags with it")
	case pipeline.FixForcePrune:
		r.gha.Noticef("to prune over the budget (inputs max-prune and protect) or garbage-collect over max-collect, label the pull request %q before merging it, or set the input force-prune: true", r.in.AllowPruneLabel)
	case pipeline.FixMapSource:
		r.gha.Noticef("the input sources maps a source to a directory checked out in the job: one KIND/NAMESPACE/NAME=DIR line")
	case pipeline.FixFetchSources:
		r.gha.Noticef("set the input fetch-sources: true (the default) to fetch GitRepositories of other repositories and pull OCIRepositories, or map them with the input sources")
	case pipeline.FixGitSecret:
		r.gha.Noticef("the input git-secrets gives the Secret a GitRepository's spec.secretRef names: a NAME=FILE or NAME=$VARIABLE line")
	case pipeline.FixOCISecret:
		r.gha.Noticef("the input oci-secrets gives the Secret an OCIRepository's spec.secretRef names (a Docker config.json): a NAME=FILE or NAME=$VARIABLE line")
	}
}

// detectDrift compares the cluster with Git; with drift-action: correct it
// re-applies and reports what was corrected.
func (r *runner) detectDrift(ctx context.Context, clients *kube.Clients, opts pipeline.Options) (*result.Result, error) {
	correct := r.in.DriftAction != "report"
	res, err := r.group("drift "+opts.Name, func() (*result.Result, error) { return pipeline.Drift(ctx, clients, opts, correct) })
	if res == nil {
		return res, err
	}
	if res.Drifted {
		r.gha.Warningf("%s", r.masker.String(opts.Name+": "+res.Message))
	} else {
		fmt.Fprintln(r.log, res.Message)
	}
	return res, err
}

// rollback applies revision in.ToRevision of the unit's history again
// (mode rollback); a commit older than the one applied needs the input
// allow-rollback, as any apply of one does.
func (r *runner) rollback(ctx context.Context, clients *kube.Clients, opts pipeline.Options) (*result.Result, error) {
	opts, rev, err := pipeline.Rollback(ctx, clients, opts, r.in.ToRevision)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(r.log, "rolling %s back to revision %d (commit %s)\n", opts.Name, rev.Revision, checkout.Short(rev.SourceRevision))
	res, err := r.group("rollback "+opts.Name, func() (*result.Result, error) { return pipeline.Apply(ctx, clients, opts) })
	if err == nil && res != nil && res.Reason == result.ReasonOutOfOrder {
		res.Ready = false
		err = fmt.Errorf("rollback refused: commit %s is older than the one applied; set allow-rollback: true to consent", checkout.Short(rev.SourceRevision))
	}
	return res, err
}
