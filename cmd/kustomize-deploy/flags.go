package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

// specFlags bind flags to the fields of a spec.Unit, the unit as the
// command line describes it; each command registers the groups it uses.
type specFlags struct {
	spec spec.Unit
}

func newSpecFlags() *specFlags { return &specFlags{spec: spec.Default()} }

// name registers --name; required says whether the command needs it.
func (f *specFlags) name(cmd *cobra.Command, required bool) {
	usage := "unit name: names its inventory Secret"
	if required {
		usage += " (required; with --config, the units to run, comma-separated, default all)"
	}
	cmd.Flags().StringVar(&f.spec.Name, "name", "", usage)
}

// build registers what says what to build and how.
func (f *specFlags) build(cmd *cobra.Command) {
	s, fs := &f.spec, cmd.Flags()
	fs.StringVar(&s.Path, "path", "", "directory to build: a kustomization, or plain manifests (required)")
	fs.StringVar(&s.Root, "root", "", "directory every file the build reads must stay inside (default: the git work tree of --path)")
	fs.StringVar(&s.Revision, "revision", "", "revision to record (default: git HEAD of --path, else $GITHUB_SHA)")
	fs.StringVar(&s.TargetNamespace, "target-namespace", "", "set the namespace of every namespaced object, replacing the one it names")
	fs.StringArrayVar(&s.Images, "image", nil, "override an image: name=newName:newTag, name=:newTag, name=newName, name@sha256:... (repeatable)")
	fs.StringVar(&s.NamePrefix, "name-prefix", "", "prefix every object name")
	fs.StringVar(&s.NameSuffix, "name-suffix", "", "suffix every object name")
	fs.StringArrayVar(&s.Labels, "label", nil, "add a label k=v to every object, selectors untouched (repeatable)")
	fs.StringArrayVar(&s.Annotations, "annotation", nil, "add an annotation k=v to every object (repeatable)")
	fs.BoolVar(&s.AllowRemoteBases, "allow-remote-bases", false, "allow kustomize resources fetched from remote URLs")
	fs.StringArrayVar(&s.Substitute, "substitute", nil, "post-build variable KEY=VALUE for ${KEY} (repeatable)")
	fs.StringArrayVar(&s.SubstituteFrom, "substitute-from", nil, "dotenv file of post-build variables (repeatable; --substitute wins)")
	fs.BoolVar(&s.AWSKMS, "aws-kms", s.AWSKMS, "decrypt SOPS files with their AWS KMS keys (credentials from the standard AWS environment)")
	fs.StringArrayVar(&s.AgeKeyFiles, "sops-age-key-file", nil, "age identities file for SOPS (repeatable; adds to $SOPS_AGE_KEY and $SOPS_AGE_KEY_FILE)")
	fs.BoolVar(&s.HelmController, "helm-controller", false, "the cluster runs Flux's helm-controller: apply HelmReleases and their sources as they are (default: render their charts here, no Flux in the cluster)")
	fs.StringVar(&s.ChartCache, "chart-cache", "", "directory that keeps fetched Helm charts, by digest (default: $XDG_CACHE_HOME/kustomize-deploy/charts, else ~/.cache/kustomize-deploy/charts)")
	fs.BoolVar(&s.ResolveImages, "resolve-images", false, "pin every workload's image (containers and init containers) to the digest its tag names now, asking each image's registry with the credentials of the Secrets the pod's imagePullSecrets name (with --config, as --oci-secret maps them), else the Docker credentials of the environment ($DOCKER_CONFIG, ~/.docker/config.json): what was reviewed is what runs (not in an --offline diff, which reaches no registry)")
	fs.StringArrayVar(&s.Fold, "fold", nil, "in a pull request's diff, count a change of only this field as noise, as helm.sh/chart, app.kubernetes.io/version and checksum/* always are: a JSON pointer, * for any key or index, e.g. /metadata/annotations/example.com~1build (repeatable)")
	fs.StringVar(&s.KubeVersion, "kube-version", "", "Kubernetes version charts' templates see in .Capabilities when there is no cluster to ask (--offline), e.g. v1.37.2 (default: Helm's)")
	fs.StringArrayVar(&s.PGPKeyFiles, "sops-pgp-key-file", nil, "armored PGP private keys file for SOPS, as gpg --export-secret-keys --armor writes it, without passphrase (repeatable)")
	for _, dir := range []string{"path", "root", "chart-cache"} {
		_ = cmd.MarkFlagDirname(dir)
	}
	for _, file := range []string{"substitute-from", "sops-age-key-file", "sops-pgp-key-file"} {
		_ = cmd.MarkFlagFilename(file)
	}
	noCompletion(cmd, "kube-version", "fold", "revision", "target-namespace", "image", "name-prefix", "name-suffix", "label", "annotation", "substitute")
}

// plan registers what says what a run against the cluster would do and
// how it checks it: diff, apply and drift all honour these.
func (f *specFlags) plan(cmd *cobra.Command, verb string) {
	s, fs := &f.spec, cmd.Flags()
	fs.StringVarP(&s.Namespace, "namespace", "n", "", "namespace of objects of namespaced kinds that name none (default: the kubeconfig context's namespace, else default); the inventory stays in --inventory-namespace")
	fs.StringVar(&s.Validation, "validation", s.Validation, "validation before anything is written: "+orList(validations())+
		" (server: dry-run every object that may change; client: offline schema check)")
	fs.StringVar(&s.SchemaDir, "schema-dir", "", "directory of JSON schemas the offline schema check (client validation, the offline diff) reads custom resources' from: {group}/{kind}_{version}.json as in the CRDs catalog, or {kind}_{version}.json, kind in lower case")
	_ = cmd.MarkFlagDirname("schema-dir")
	fs.BoolVar(&s.Force, "force", false, "recreate objects whose immutable fields changed")
	fs.BoolVar(&s.Prune, "prune", s.Prune, "delete objects that left the build")
	fs.IntVar(&s.MaxPrune, "max-prune", 0, "refuse a run that would prune more objects than this, before it writes anything (0: no limit)")
	fs.StringSliceVar(&s.Protect, "protect", nil, "refuse a run that would prune an object of these kinds, before it writes anything (Kind or Kind.group, comma-separated; e.g. "+strings.Join(prune.DefaultProtect, ",")+")")
	fs.IntVar(&s.MaxCollect, "max-collect", s.MaxCollect, "with --config, refuse to garbage-collect more units that left the configuration than this (0: no limit); their objects also count as one prune against --max-prune and --protect")
	fs.BoolVar(&s.ForcePrune, "force-prune", false, "prune even over --max-prune or of --protect kinds, and garbage-collect even over --max-collect")
	fs.DurationVar(&s.Timeout, "timeout", s.Timeout, "how long to wait for readiness (also bounds the CRD and Namespace stage, and a wait for a Namespace being deleted)")
	f.serviceAccount(cmd, verb)
	fs.BoolVar(&s.Recheck, "recheck", false, "dry-run every object, also those unchanged in Git and untouched in the cluster since the last run (skipped by default)")
	_ = cmd.RegisterFlagCompletionFunc("validation", cobra.FixedCompletions(validations(), cobra.ShellCompDirectiveNoFileComp))
	noCompletion(cmd, "namespace", "timeout", "max-prune", "protect", "max-collect")
}

// write registers what only a run that writes honours (apply, and drift
// with --correct): dependencies, waiting, the lock, the revision guard,
// Helm release records. A diff writes nothing, so it has none of them.
func (f *specFlags) write(cmd *cobra.Command) {
	s, fs := &f.spec, cmd.Flags()
	fs.StringSliceVar(&s.DependsOn, "depends-on", nil, "units that must be Ready before an apply (comma-separated or repeated)")
	fs.BoolVar(&s.Wait, "wait", s.Wait, "wait for every applied object to become ready")
	fs.StringArrayVar(&s.HealthChecks, "health-check", nil, "also wait for Kind/namespace/name, or group/Kind/namespace/name (repeatable)")
	fs.BoolVar(&s.AllowRollback, "allow-rollback", false, "apply a revision committed before the one last applied (refused by default, so that a slow run never rolls back a newer deploy)")
	f.lockTimeout(cmd)
	fs.DurationVar(&s.WaitForDependencies, "wait-for-dependencies", 0, "wait this long at most for dependencies outside the run (--depends-on, or with --config --name the units of other jobs) to be Ready at this revision or a newer one, e.g. 10m; 0 checks once that they are Ready")
	fs.BoolVar(&s.RemoveHelmReleaseRecords, "remove-helm-release-records", false, "once a unit that took over objects of a Helm release (helm CLI, helm-controller) applied and is ready, delete that release's records (Secrets, ConfigMaps owner=helm,name=RELEASE), so a later helm upgrade or a running helm-controller cannot fight over its objects")
	noCompletion(cmd, "health-check", "wait-for-dependencies")
}

// deleteBudget registers the prune budget of delete --config: how many
// units, and what objects, one delete may remove.
func (f *specFlags) deleteBudget(cmd *cobra.Command) {
	s, fs := &f.spec, cmd.Flags()
	fs.IntVar(&s.MaxCollect, "max-collect", s.MaxCollect, "with --config, refuse to delete more units than this (0: no limit); their objects also count as one prune against --max-prune and --protect")
	fs.IntVar(&s.MaxPrune, "max-prune", 0, "with --config, refuse to delete more objects than this, all units together (0: no limit)")
	fs.StringSliceVar(&s.Protect, "protect", nil, "with --config, refuse to delete an object of these kinds (Kind or Kind.group, comma-separated)")
	fs.BoolVar(&s.ForcePrune, "force-prune", false, "with --config, delete even over --max-collect, --max-prune or of --protect kinds")
	noCompletion(cmd, "max-collect", "max-prune", "protect")
}

// lockTimeout registers --lock-timeout, for commands that write a unit.
func (f *specFlags) lockTimeout(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&f.spec.LockTimeout, "lock-timeout", f.spec.LockTimeout, "how long to wait for another run of the same unit to finish (each run holds a Lease next to the unit's inventory)")
	noCompletion(cmd, "lock-timeout")
}

func (f *specFlags) serviceAccount(cmd *cobra.Command, verb string) {
	cmd.Flags().StringVar(&f.spec.ServiceAccount, "service-account", "", verb+" as this service account of the inventory namespace (impersonation: its RBAC decides what the unit may touch)")
	noCompletion(cmd, "service-account")
}

// options checks the flags and turns them into engine options; bad values
// are usage errors naming their flag.
func (f *specFlags) options(ctx context.Context, needs spec.Needs, e *env, cl *clusterFlags) (pipeline.Options, error) {
	return optionsOf(ctx, f.spec, needs, e, cl)
}

// optionsOf is options for a spec the command adjusted.
func optionsOf(ctx context.Context, s spec.Unit, needs spec.Needs, e *env, cl *clusterFlags) (pipeline.Options, error) {
	if cl != nil {
		s.InventoryNamespace = cl.inventoryNS
	}
	o, err := s.Options(ctx, needs, e.getenv)
	if err != nil {
		return o, flagErrors(spec.OptionErrors(err))
	}
	o.Mask = func(v []string) { e.masker.Add(v...) }
	o.Decryption.HTTPClient = e.cloud
	if o.Charts != nil && o.Charts.Fetcher != nil {
		o.Charts.Fetcher.Sigstore = e.sigstore
	}
	o.Progress = e.stderr
	if o.ResourceSets, err = e.resourceSets(); err != nil {
		return o, err
	}
	return o, nil
}

func validations() []string {
	out := make([]string, len(result.Validations))
	for i, v := range result.Validations {
		out[i] = string(v)
	}
	return out
}

// noCompletion says the flags take free text: the shell offers no files.
func noCompletion(cmd *cobra.Command, flags ...string) {
	for _, f := range flags {
		_ = cmd.RegisterFlagCompletionFunc(f, cobra.NoFileCompletions)
	}
}

// flagErrors says each bad option by its flag, one per line: a usage error.
func flagErrors(errs []*spec.OptionError) error {
	msgs := make([]string, len(errs))
	for i, oe := range errs {
		msgs[i] = fmt.Sprintf("--%s: %v", oe.Option, oe.Err)
	}
	return usagef("%s", strings.Join(msgs, "\n"))
}
