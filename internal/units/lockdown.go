package units

import (
	"fmt"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
)

// Flux's multi-tenancy lockdown, as the configuration declares it
// (config.Lockdown), is honoured as kustomize-controller and
// helm-controller honour their flags:
//
//   - --default-service-account: a Kustomization or HelmRelease without
//     spec.serviceAccountName is applied as that account of its own
//     namespace, impersonated as an explicit serviceAccountName is
//     (kustomize-controller's runtime/client WithServiceAccount,
//     helm-controller's SetImpersonationConfig), in every namespace,
//     Flux's own included: the lockdown patches the platform's
//     Kustomizations with serviceAccountName: kustomize-controller,
//     which this run stands in for;
//   - --no-cross-namespace-refs: a Kustomization's sourceRef, a
//     HelmRelease's chart, in another namespace fails it with reason
//     AccessDenied and the controller's own message (dependsOn,
//     valuesFrom and substituteFrom are not ACL-checked by Flux);
//   - --no-remote-bases: a remote base fails the unit's build, whatever
//     the run allows;
//   - notification-controller's --no-cross-namespace-refs: an Alert takes
//     no event of a unit in another namespace (notify.Options).
//
// A front end may set the first two for repositories whose controllers
// are installed elsewhere (LockdownOverride): they then win over the
// configuration's, and the run's notes say which took effect.

// LockdownOverride is what a front end sets of Flux's lockdown, for
// both controllers, over what the configuration declares; nil leaves
// the configuration's.
type LockdownOverride struct {
	DefaultServiceAccount *string
	NoCrossNamespaceRefs  *bool
}

// byRun is where a setting of the lockdown given to the run is said to
// be declared.
const byRun = "given to this run"

// tenancy is one controller's lockdown as the run honours it: the
// configuration's, with the front end's override on top.
type tenancy struct {
	controller           string
	account, accountAt   string
	noCross              bool
	noCrossAt            string
	noRemote             bool
	noRemoteAt           string
	overridden, declared []string
}

// tenancyOf is the lockdown of controller (config.KustomizeController
// or config.HelmController) that the run honours.
func (c Config) tenancyOf(controller string) tenancy {
	decl := c.Set.Lockdown.Kustomize
	switch controller {
	case config.HelmController:
		decl = c.Set.Lockdown.Helm
	case config.NotificationController:
		decl = c.Set.Lockdown.Notification
	}
	t := tenancy{controller: controller,
		account: decl.DefaultServiceAccount.Value, accountAt: decl.DefaultServiceAccount.At,
		noCross: decl.NoCrossNamespaceRefs.On(), noCrossAt: decl.NoCrossNamespaceRefs.At,
		noRemote: decl.NoRemoteBases.On(), noRemoteAt: decl.NoRemoteBases.At}
	if o := c.Lockdown.DefaultServiceAccount; o != nil && controller != config.NotificationController {
		if t.account != "" && t.account != *o {
			t.overridden = append(t.overridden, fmt.Sprintf("--%s=%s (%s)", config.FlagDefaultServiceAccount, t.account, t.accountAt))
		}
		t.account, t.accountAt = *o, byRun
	}
	if o := c.Lockdown.NoCrossNamespaceRefs; o != nil {
		if decl.NoCrossNamespaceRefs.Value != "" && t.noCross != *o {
			t.overridden = append(t.overridden, fmt.Sprintf("--%s=%s (%s)", config.FlagNoCrossNamespaceRefs, decl.NoCrossNamespaceRefs.Value, t.noCrossAt))
		}
		t.noCross, t.noCrossAt = *o, byRun
	}
	return t
}

// notes say what of controller's lockdown takes effect, and where it
// was declared: one line, or none when nothing is locked down.
func (t tenancy) notes() []string {
	var on []string
	if t.account != "" {
		on = append(on, fmt.Sprintf("--%s=%s (%s)", config.FlagDefaultServiceAccount, t.account, t.accountAt))
	}
	if t.noCross {
		on = append(on, fmt.Sprintf("--%s=true (%s)", config.FlagNoCrossNamespaceRefs, t.noCrossAt))
	}
	if t.noRemote {
		on = append(on, fmt.Sprintf("--%s=true (%s)", config.FlagNoRemoteBases, t.noRemoteAt))
	}
	var out []string
	if len(on) > 0 {
		out = append(out, fmt.Sprintf("Flux's multi-tenancy lockdown of %s takes effect: %s", t.controller, strings.Join(on, ", ")))
	}
	if len(t.overridden) > 0 {
		out = append(out, fmt.Sprintf("%s's lockdown as given to this run takes effect over the configuration's %s", t.controller, strings.Join(t.overridden, ", ")))
	}
	return out
}

// lockdownNotes are the notes of both controllers' lockdowns.
func (c Config) lockdownNotes() []string {
	var out []string
	for _, controller := range []string{config.KustomizeController, config.HelmController, config.NotificationController} {
		out = append(out, c.tenancyOf(controller).notes()...)
	}
	return out
}

// sourceDenied is kustomize-controller's refusal of u's sourceRef under
// t, nil when it is allowed.
func (t tenancy) sourceDenied(u *config.Unit) error {
	src := u.Source
	if !t.noCross || src.Kind == "" || src.Namespace == u.Ref.Namespace {
		return nil
	}
	return &config.AccessDeniedError{Object: fmt.Sprintf("Kustomization %s (%s)", u.Ref, where(u)), Field: "spec.sourceRef",
		Msg:  config.CrossNamespaceKustomization(src.Kind, config.Ref{Namespace: src.Namespace, Name: src.Name}),
		Flag: "kustomize-controller's --" + config.FlagNoCrossNamespaceRefs + "=true", At: t.noCrossAt}
}

// defaultAccount is the account u is applied as under t when it names
// none, with the note saying so; "" when it names one or t has none.
func (t tenancy) defaultAccount(u *config.Unit) (string, string) {
	if u.ServiceAccountName != "" || u.SelfAccount != "" || u.ServiceAccountNamespace != "" || t.account == "" {
		return "", ""
	}
	return t.account, fmt.Sprintf("applies as %s/%s (system:serviceaccount:%s:%s): it has no spec.serviceAccountName, and Flux's multi-tenancy lockdown gives kustomize-controller --%s=%s (%s)",
		u.Ref.Namespace, t.account, u.Ref.Namespace, t.account, config.FlagDefaultServiceAccount, t.account, t.accountAt)
}

// remoteBases says why u's build refuses remote bases under t ("" when
// it does not).
func (t tenancy) remoteBases() string {
	if !t.noRemote {
		return ""
	}
	return fmt.Sprintf("Flux's multi-tenancy lockdown gives kustomize-controller --%s=true (%s)", config.FlagNoRemoteBases, t.noRemoteAt)
}

// charts is helm-controller's lockdown under t, for rendering charts.
func (t tenancy) charts() helm.Lockdown {
	return helm.Lockdown{DefaultServiceAccount: t.account, AccountAt: t.accountAt, NoCrossNamespaceRefs: t.noCross, CrossAt: t.noCrossAt}
}
