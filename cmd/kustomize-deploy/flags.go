package main

import (
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
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

// pipelineOptions turns flags (and the environment, read only here) into
// engine options.
func (f *flags) pipelineOptions(getenv func(string) string) (pipeline.Options, error) {
	o := pipeline.DefaultOptions()
	o.Name, o.Path, o.Root, o.InventoryNamespace = f.name, f.path, f.root, f.inventoryNS
	if o.Path == "" {
		return o, usagef("--path is required")
	}
	o.Revision = f.revision
	if o.Revision == "" {
		o.Revision = gitHead(f.path)
	}
	if o.Revision == "" {
		o.Revision = getenv("GITHUB_SHA")
	}
	b := build.Options{TargetNamespace: f.targetNS, NamePrefix: f.namePrefix, NameSuffix: f.nameSuffix, AllowRemoteBases: f.allowRemote}
	for _, s := range f.images {
		img, err := build.ParseImage(s)
		if err != nil {
			return o, usagef("--image: %v", err)
		}
		b.Images = append(b.Images, img)
	}
	var err error
	if b.Labels, err = keyValues("--label", f.labels); err != nil {
		return o, err
	}
	if b.Annotations, err = keyValues("--annotation", f.annotations); err != nil {
		return o, err
	}
	o.Build = b
	o.Substitute = map[string]string{}
	for _, file := range f.substituteFrom {
		vars, err := build.ParseDotenv(file)
		if err != nil {
			return o, usagef("--substitute-from: %v", err)
		}
		for k, v := range vars {
			o.Substitute[k] = v
		}
	}
	for _, s := range f.substitute {
		k, v, err := build.ParseKeyValue(s)
		if err != nil {
			return o, usagef("--substitute: %v", err)
		}
		o.Substitute[k] = v
	}
	o.AWSKMS = f.awsKMS
	if o.AgeIdentities, err = decrypt.LoadAgeIdentities(getenv, f.ageKeyFiles); err != nil {
		return o, usagef("%v", err)
	}
	if f.dependsOn != "" {
		for _, d := range strings.Split(f.dependsOn, ",") {
			if d = strings.TrimSpace(d); d != "" {
				o.DependsOn = append(o.DependsOn, d)
			}
		}
	}
	switch v := result.Validation(f.validation); v {
	case result.ValidationClient, result.ValidationServer, result.ValidationNone:
		o.Validation = v
	default:
		return o, usagef("--validation must be client, server or none, not %q", f.validation)
	}
	o.Force, o.Prune, o.Wait, o.Timeout, o.ServiceAccount = f.force, f.prune, f.wait, f.timeout, f.serviceAccount
	o.Recheck = f.recheck
	for _, hc := range f.healthChecks {
		id, err := parseObjectRef(hc)
		if err != nil {
			return o, usagef("--health-check %q: %v", hc, err)
		}
		o.HealthChecks = append(o.HealthChecks, id)
	}
	return o, nil
}

func keyValues(flagName string, items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, s := range items {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, usagef("%s %q: want key=value", flagName, s)
		}
		m[k] = v
	}
	return m, nil
}

// parseObjectRef reads Kind/namespace/name, Kind/name (cluster-scoped) or
// group/Kind/namespace/name.
func parseObjectRef(s string) (object.ID, error) {
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 2:
		return object.ID{Group: coreGroup(parts[0]), Kind: parts[0], Name: parts[1]}, nil
	case 3:
		return object.ID{Group: coreGroup(parts[0]), Kind: parts[0], Namespace: parts[1], Name: parts[2]}, nil
	case 4:
		return object.ID{Group: parts[0], Kind: parts[1], Namespace: parts[2], Name: parts[3]}, nil
	}
	return object.ID{}, fmt.Errorf("want Kind/namespace/name, Kind/name or group/Kind/namespace/name")
}

// coreGroup knows the groups of the workload kinds people health-check most.
func coreGroup(kind string) string {
	switch kind {
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet":
		return "apps"
	case "Job", "CronJob":
		return "batch"
	}
	return ""
}

func gitHead(path string) string {
	if path == "" {
		return ""
	}
	out, err := exec.Command("git", "-C", path, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
