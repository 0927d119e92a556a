package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// list is a repeatable string flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// flags holds every flag a command may take; each command registers the
// groups it uses.
type flags struct {
	// cluster
	kubeconfig, context, inventoryNS string
	qps                              float64
	burst                            int
	// output
	output string
	// unit
	name, path, root, revision string
	// build
	targetNS, namePrefix, nameSuffix string
	images, labels, annotations      list
	allowRemote                      bool
	substitute, substituteFrom       list
	ageKeyFiles                      list
	awsKMS                           bool
	// apply
	dependsOn, validation, serviceAccount string
	force, prune, wait, recheck           bool
	timeout                               time.Duration
	healthChecks                          list
}

func (f *flags) cluster(fs *flag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, or in-cluster)")
	fs.StringVar(&f.context, "context", "", "kubeconfig context (default: the current context)")
	fs.StringVar(&f.inventoryNS, "inventory-namespace", "", "namespace of the unit's inventory Secret (default: the context's namespace, else default)")
	fs.Float64Var(&f.qps, "kube-api-qps", kube.DefaultQPS, "requests per second the client may send to the API server")
	fs.IntVar(&f.burst, "kube-api-burst", kube.DefaultBurst, "requests the client may send at once above --kube-api-qps")
}

func (f *flags) out(fs *flag.FlagSet) {
	fs.StringVar(&f.output, "output", "text", "output format: text or json")
}

func (f *flags) unitName(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "name", "", "unit name: names its inventory Secret (required)")
}

func (f *flags) buildFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.path, "path", "", "directory to build: a kustomization, or plain manifests (required)")
	fs.StringVar(&f.root, "root", "", "directory every file must stay inside (default: the git work tree of --path)")
	fs.StringVar(&f.revision, "revision", "", "revision to record (default: git HEAD of --path, else $GITHUB_SHA)")
	fs.StringVar(&f.targetNS, "target-namespace", "", "set the namespace of every namespaced object")
	fs.Var(&f.images, "image", "override an image: name=newName:newTag, name=:newTag, name=newName, name@sha256:... (repeatable)")
	fs.StringVar(&f.namePrefix, "name-prefix", "", "prefix every object name")
	fs.StringVar(&f.nameSuffix, "name-suffix", "", "suffix every object name")
	fs.Var(&f.labels, "label", "add a label k=v to every object, selectors untouched (repeatable)")
	fs.Var(&f.annotations, "annotation", "add an annotation k=v to every object (repeatable)")
	fs.BoolVar(&f.allowRemote, "allow-remote-bases", false, "allow kustomize resources fetched from remote URLs")
	fs.Var(&f.substitute, "substitute", "post-build variable KEY=VALUE for ${KEY} (repeatable)")
	fs.Var(&f.substituteFrom, "substitute-from", "dotenv file of post-build variables (repeatable; --substitute wins)")
	fs.BoolVar(&f.awsKMS, "aws-kms", true, "decrypt SOPS files with their AWS KMS keys (credentials from the standard AWS environment)")
	fs.Var(&f.ageKeyFiles, "sops-age-key-file", "age identities file for SOPS (repeatable; adds to $SOPS_AGE_KEY and $SOPS_AGE_KEY_FILE)")
}

func (f *flags) applyFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.dependsOn, "depends-on", "", "comma-separated units that must be Ready first")
	fs.StringVar(&f.validation, "validation", string(result.ValidationServer), "validation before applying: client (offline schema check), server (dry-run every object) or none")
	fs.BoolVar(&f.force, "force", false, "recreate objects whose immutable fields changed")
	fs.BoolVar(&f.prune, "prune", true, "delete objects that left the build")
	fs.BoolVar(&f.wait, "wait", true, "wait for every applied object to become ready")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "how long to wait for readiness")
	fs.Var(&f.healthChecks, "health-check", "also wait for Kind/namespace/name, or group/Kind/namespace/name (repeatable)")
	fs.StringVar(&f.serviceAccount, "service-account", "", "apply as this service account of the inventory namespace (impersonation)")
	fs.BoolVar(&f.recheck, "recheck", false, "dry-run every object, also those unchanged in Git and untouched in the cluster since the last run (skipped by default)")
}

// usageError is a command-line mistake: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// clients connects to the cluster the flags name; requests, if not nil,
// counts what the clients send.
func (f *flags) clients(requests *kube.RequestCounter) (*kube.Clients, error) {
	if f.qps <= 0 || f.burst <= 0 {
		return nil, usagef("--kube-api-qps and --kube-api-burst must be positive")
	}
	o := kube.Options{QPS: float32(f.qps), Burst: f.burst}
	o.Kubeconfig, o.Context, o.Requests = f.kubeconfig, f.context, requests
	return kube.Load(o)
}

// spec is the unit as the flags describe it.
func (f *flags) spec() pipeline.Spec {
	s := pipeline.DefaultSpec()
	s.Name, s.Path, s.Root, s.Revision, s.InventoryNamespace = f.name, f.path, f.root, f.revision, f.inventoryNS
	s.TargetNamespace, s.NamePrefix, s.NameSuffix, s.AllowRemoteBases = f.targetNS, f.namePrefix, f.nameSuffix, f.allowRemote
	s.Images, s.Labels, s.Annotations = f.images, f.labels, f.annotations
	s.Substitute, s.SubstituteFrom = f.substitute, f.substituteFrom
	s.AgeKeyFiles, s.AWSKMS = f.ageKeyFiles, f.awsKMS
	s.DependsOn = strings.Split(f.dependsOn, ",")
	s.Validation = f.validation
	s.Force, s.Prune, s.Wait, s.Timeout, s.ServiceAccount, s.Recheck = f.force, f.prune, f.wait, f.timeout, f.serviceAccount, f.recheck
	s.HealthChecks = f.healthChecks
	return s
}

// pipelineOptions turns flags (and the environment, read only here) into
// engine options; bad values are usage errors naming their flag.
func (f *flags) pipelineOptions(needs pipeline.Needs, getenv func(string) string) (pipeline.Options, error) {
	o, err := f.spec().Options(needs, getenv)
	if err != nil {
		var msgs []string
		for _, oe := range pipeline.OptionErrors(err) {
			msgs = append(msgs, fmt.Sprintf("--%s: %v", oe.Option, oe.Err))
		}
		return o, usagef("%s", strings.Join(msgs, "\n"))
	}
	return o, nil
}
