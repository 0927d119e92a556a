package config

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Flux's multi-tenancy lockdown
// (https://fluxcd.io/flux/installation/configuration/multitenancy/) is
// declared in the repository: flux2-multi-tenancy's
// flux-system/kustomization.yaml patches the controllers' Deployments
// (gotk-components.yaml) with --no-cross-namespace-refs=true,
// --no-remote-bases=true and --default-service-account=default; a
// FluxInstance's spec.cluster.multitenant makes Flux Operator add the
// same flags (flux-operator internal/builder/profiles.go,
// profileClusterMultitenant). It is read as Flux gets it: from the
// Deployments the configuration's builds emit (what the cluster would
// run, the patches applied), and from FluxInstances.

// Controller flags of the lockdown, as kustomize-controller's and
// helm-controller's main.go and fluxcd/pkg runtime/acl (flags.go) bind
// them.
const (
	FlagNoCrossNamespaceRefs  = "no-cross-namespace-refs"
	FlagNoRemoteBases         = "no-remote-bases"
	FlagDefaultServiceAccount = "default-service-account"
)

// The controllers whose lockdown the run stands in for.
const (
	KustomizeController    = "kustomize-controller"
	HelmController         = "helm-controller"
	NotificationController = "notification-controller"
)

// Lockdown is Flux's multi-tenancy lockdown as the configuration
// declares it, by controller.
type Lockdown struct {
	// Kustomize is kustomize-controller's (Kustomizations), Helm
	// helm-controller's (HelmReleases).
	Kustomize ControllerFlags `yaml:",omitempty"`
	Helm      ControllerFlags `yaml:",omitempty"`
	// Notification is notification-controller's (Alerts): only
	// NoCrossNamespaceRefs is read.
	Notification ControllerFlags `yaml:",omitempty"`
	// Files are the files of the objects declaring it (the Deployments,
	// the FluxInstances), relative to their source's root: a change there,
	// or in a kustomization beside or above one, may change it.
	Files []string `yaml:",omitempty"`
}

// ControllerFlags are one controller's lockdown flags.
type ControllerFlags struct {
	DefaultServiceAccount Setting `yaml:"defaultServiceAccount,omitempty"`
	NoCrossNamespaceRefs  Setting `yaml:"noCrossNamespaceRefs,omitempty"`
	NoRemoteBases         Setting `yaml:"noRemoteBases,omitempty"`
	// From are the declarations read (a Deployment, a FluxInstance,
	// where each is): one that sets no flag that another sets is a
	// disagreement (see Set.mergeLockdown).
	From []string `yaml:"from,omitempty"`
}

// Setting is one flag of a controller: its value ("" not set; "true"
// or "false" for a boolean flag) and where it was declared (file:line,
// and the object).
type Setting struct {
	Value string `yaml:",omitempty"`
	At    string `yaml:",omitempty"`
}

// On says whether a boolean flag is set to true.
func (s Setting) On() bool { return s.Value == "true" }

func (c ControllerFlags) set() bool {
	return c.DefaultServiceAccount.Value != "" || c.NoCrossNamespaceRefs.Value != "" || c.NoRemoteBases.Value != ""
}

// IsZero says whether l declares nothing.
func (l Lockdown) IsZero() bool {
	return len(l.Kustomize.From) == 0 && len(l.Helm.From) == 0 && len(l.Notification.From) == 0 && len(l.Files) == 0
}

// MayChange says whether a change of file (relative to the root) may
// change the lockdown: it is a file declaring it, or a kustomization in
// the directory of one or above it (one that patches the controllers'
// Deployments, as flux2-multi-tenancy's flux-system/kustomization.yaml).
func (l Lockdown) MayChange(file string) bool {
	if slices.Contains(l.Files, file) {
		return true
	}
	switch path.Base(file) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
	default:
		return false
	}
	dir := path.Dir(file)
	for _, f := range l.Files {
		if d := path.Dir(f); d == dir || dir == "." || strings.HasPrefix(d, dir+"/") {
			return true
		}
	}
	return false
}

// controllerNames are the Deployments of Flux's controllers whose
// flags are read, by the controller they are (flux install's names).
var controllerNames = map[string]bool{KustomizeController: true, HelmController: true, NotificationController: true}

// controllerArgs returns the container args of obj, an object a build
// emitted, when it is the Deployment of a Flux controller whose lockdown
// is read: its controller's name, its namespace and its args.
func controllerArgs(obj map[string]any) (name, namespace string, args []string, ok bool) {
	if obj["apiVersion"] != "apps/v1" || obj["kind"] != "Deployment" {
		return "", "", nil, false
	}
	meta, _ := obj["metadata"].(map[string]any)
	name, _ = meta["name"].(string)
	namespace, _ = meta["namespace"].(string)
	if !controllerNames[name] {
		return "", "", nil, false
	}
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	containers, _ := pod["containers"].([]any)
	// The controller is the container named manager (flux install's), else
	// the first: the one the lockdown's patches add to
	// (/spec/template/spec/containers/0/args/-).
	var container map[string]any
	for i, c := range containers {
		m, _ := c.(map[string]any)
		if i == 0 || m["name"] == "manager" {
			container = m
		}
		if m["name"] == "manager" {
			break
		}
	}
	list, _ := container["args"].([]any)
	for _, a := range list {
		if s, ok := a.(string); ok {
			args = append(args, s)
		}
	}
	return name, namespace, args, true
}

// parseFlags reads the lockdown's flags in args as the controllers'
// pflag does: --flag=value, --flag value (a string flag takes the next
// argument), a boolean flag alone meaning true (a boolean takes a value
// only after "=": "--no-remote-bases false" is true, "false" an argument
// of its own); the last occurrence wins. A boolean's value is
// strconv.ParseBool's; one that does not parse is returned in bad (the
// controller would refuse to start).
func parseFlags(args []string) (flags map[string]string, bad []string) {
	flags = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break // what follows are arguments
		}
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		switch name {
		case FlagNoCrossNamespaceRefs, FlagNoRemoteBases:
			if !hasValue {
				value = "true"
			}
			b, err := strconv.ParseBool(value)
			if err != nil {
				bad = append(bad, a)
				continue
			}
			flags[name] = strconv.FormatBool(b)
		case FlagDefaultServiceAccount:
			if !hasValue && i+1 < len(args) {
				i++
				value = args[i]
			}
			flags[name] = value
		}
	}
	return flags, bad
}

// controllerLockdown is the lockdown the Deployment of controller
// (namespace/name) declares with args, at line of file (0: unknown);
// locate, when set, finds the file:line holding an argument's text (the
// patch adding it), else the Deployment's is given.
func controllerLockdown(name, namespace string, args []string, file string, line int, locate func(string) string) (Lockdown, []string) {
	at := file
	if line > 0 {
		at = fmt.Sprintf("%s:%d", file, line)
	}
	flags, bad := parseFlags(args)
	what := fmt.Sprintf("Deployment %s/%s", namespace, name)
	c := ControllerFlags{From: []string{fmt.Sprintf("%s (%s)", at, what)}}
	var notes []string
	for _, a := range bad {
		notes = append(notes, fmt.Sprintf("%s (%s): argument %s is not a boolean: the controller would not start; the flag is not taken", what, at, a))
	}
	where := func(flag string) string {
		if locate != nil {
			if l := locate("--" + flag); l != "" {
				return fmt.Sprintf("%s (%s args)", l, what)
			}
		}
		return fmt.Sprintf("%s (%s args)", at, what)
	}
	if v, ok := flags[FlagDefaultServiceAccount]; ok && v != "" && name != NotificationController {
		c.DefaultServiceAccount = Setting{Value: v, At: where(FlagDefaultServiceAccount)}
	}
	if v, ok := flags[FlagNoCrossNamespaceRefs]; ok {
		c.NoCrossNamespaceRefs = Setting{Value: v, At: where(FlagNoCrossNamespaceRefs)}
	}
	if v, ok := flags[FlagNoRemoteBases]; ok && name == KustomizeController {
		c.NoRemoteBases = Setting{Value: v, At: where(FlagNoRemoteBases)}
	}
	l := Lockdown{Files: []string{file}}
	switch name {
	case KustomizeController:
		l.Kustomize = c
	case HelmController:
		l.Helm = c
	default:
		l.Notification = c
	}
	return l, notes
}

// instanceLockdown is the lockdown a FluxInstance's spec.cluster
// declares (multitenant, tenantDefaultServiceAccount), at where: Flux
// Operator then adds --no-cross-namespace-refs=true to both controllers
// (and notification-controller),
// --no-remote-bases=true to kustomize-controller and
// --default-service-account (tenantDefaultServiceAccount, else
// "default") to both (profileClusterMultitenant).
func (d *decoder) instanceLockdown(spec *fields, ref Ref, at string) (Lockdown, bool) {
	cluster := spec.object("cluster")
	if cluster == nil || !cluster.boolean("multitenant") {
		return Lockdown{}, false
	}
	sa := cluster.str("tenantDefaultServiceAccount")
	if sa == "" {
		sa = "default" // the operator's default
	}
	where := fmt.Sprintf("%s (FluxInstance %s spec.cluster.multitenant)", at, ref)
	if l := cluster.lines["multitenant"]; l > 0 {
		where = fmt.Sprintf("%s:%d (FluxInstance %s spec.cluster.multitenant)", d.file, d.fileLine(l), ref)
	}
	on := Setting{Value: "true", At: where}
	account := Setting{Value: sa, At: where}
	if l := cluster.lines["tenantDefaultServiceAccount"]; l > 0 {
		account.At = fmt.Sprintf("%s:%d (FluxInstance %s spec.cluster.tenantDefaultServiceAccount)", d.file, d.fileLine(l), ref)
	}
	from := []string{fmt.Sprintf("%s (FluxInstance %s)", at, ref)}
	return Lockdown{
		Files:        []string{d.file},
		Kustomize:    ControllerFlags{DefaultServiceAccount: account, NoCrossNamespaceRefs: on, NoRemoteBases: on, From: from},
		Helm:         ControllerFlags{DefaultServiceAccount: account, NoCrossNamespaceRefs: on, From: from},
		Notification: ControllerFlags{NoCrossNamespaceRefs: on, From: from},
	}, true
}

// mergeLockdown adds l, declared by another object, to s's lockdown.
// Declarations that disagree are noted and the stricter is taken: a
// boolean flag set to true over false or unset; a default service
// account over none (of two different accounts, the first declared).
func (s *Set) mergeLockdown(l Lockdown) {
	s.Lockdown.Kustomize = s.mergeController(KustomizeController, s.Lockdown.Kustomize, l.Kustomize)
	s.Lockdown.Helm = s.mergeController(HelmController, s.Lockdown.Helm, l.Helm)
	s.Lockdown.Notification = s.mergeController(NotificationController, s.Lockdown.Notification, l.Notification)
	for _, f := range l.Files {
		if !slices.Contains(s.Lockdown.Files, f) {
			s.Lockdown.Files = append(s.Lockdown.Files, f)
		}
	}
}

func (s *Set) mergeController(name string, have, add ControllerFlags) ControllerFlags {
	if len(add.From) == 0 {
		return have
	}
	if len(have.From) == 0 {
		return add
	}
	out := have
	out.From = append(append([]string(nil), have.From...), add.From...)
	out.DefaultServiceAccount = s.stricter(name, FlagDefaultServiceAccount, have.DefaultServiceAccount, add.DefaultServiceAccount, have.From, add.From)
	out.NoCrossNamespaceRefs = s.stricter(name, FlagNoCrossNamespaceRefs, have.NoCrossNamespaceRefs, add.NoCrossNamespaceRefs, have.From, add.From)
	out.NoRemoteBases = s.stricter(name, FlagNoRemoteBases, have.NoRemoteBases, add.NoRemoteBases, have.From, add.From)
	return out
}

// stricter is the stricter of two declarations of flag of controller
// name (a, from the declarations haveFrom; b, from addFrom), with a note
// when they disagree.
func (s *Set) stricter(name, flag string, a, b Setting, haveFrom, addFrom []string) Setting {
	if a.Value == b.Value || flag != FlagDefaultServiceAccount && a.On() == b.On() {
		if a.Value == "" {
			return b
		}
		return a
	}
	say := func(x Setting, from []string) string {
		if x.Value == "" {
			return strings.Join(from, ", ") + " does not set it"
		}
		return fmt.Sprintf("%s sets --%s=%s", x.At, flag, x.Value)
	}
	took := a
	switch {
	case a.Value == "":
		took = b
	case b.Value == "":
	case flag != FlagDefaultServiceAccount && b.On():
		took = b
	}
	s.Notes = append(s.Notes, fmt.Sprintf("%s's lockdown is declared twice, differently: %s; %s: the stricter, --%s=%s, is taken",
		name, say(a, haveFrom), say(b, addFrom), flag, took.Value))
	return took
}

// AccessDeniedError is a reference Flux's lockdown refuses, as
// fluxcd/pkg runtime/acl's AccessDeniedError: the unit fails with
// reason AccessDenied (fluxcd/pkg apis/acl AccessDeniedReason). Msg is
// the controller's own message; At says where the lockdown was declared.
type AccessDeniedError struct {
	// Object names the object refusing the reference and its file:
	// "Kustomization apps/dev-team (tenants/dev-team.yaml:12)".
	Object string
	// Field is the reference's field (spec.sourceRef).
	Field string
	Msg   string
	// Flag is the controller's flag, "kustomize-controller's
	// --no-cross-namespace-refs=true", and At where it was declared.
	Flag, At string
}

func (e *AccessDeniedError) Error() string {
	s := e.Msg
	if e.Field != "" {
		s = e.Field + ": " + s
	}
	if e.Object != "" {
		s = e.Object + ": " + s
	}
	return fmt.Sprintf("%s (%s, %s)", s, e.Flag, e.At)
}

// AccessDenied marks the error as an ACL refusal, for the engine's
// failure reason.
func (e *AccessDeniedError) AccessDenied() bool { return true }

// CrossNamespaceKustomization is kustomize-controller's refusal of a
// Kustomization's sourceRef in another namespace
// (internal/controller/kustomization_controller.go, getSource).
func CrossNamespaceKustomization(kind string, source Ref) string {
	return fmt.Sprintf("can't access '%s/%s', cross-namespace references have been blocked", kind, source)
}

// CrossNamespaceHelmRelease is helm-controller's refusal of a
// HelmRelease's chart in another namespace (internal/acl/acl.go,
// AllowsAccessTo): kind is HelmChart for spec.chart (whose HelmChart
// lives in the sourceRef's namespace, named <namespace>-<name> of the
// HelmRelease) and a chartRef naming one, OCIRepository or
// ExternalArtifact for a chartRef naming those.
func CrossNamespaceHelmRelease(kind string, ref Ref) string {
	return fmt.Sprintf("cross-namespace references are not allowed: cannot access %s %s", kind, ref)
}
