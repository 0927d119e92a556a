package pipeline

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A unit of a configuration of Flux Kustomizations (Options.RunFlux) does
// what kustomize-controller would with the Flux objects its build emits,
// with no controller in the cluster to read them:
//
//   - a Kustomization (kustomize.toolkit.fluxcd.io) becomes a unit of the
//     same run (see units' discovery) instead of an inert custom resource;
//   - its sources (GitRepository, OCIRepository, Bucket, ExternalArtifact,
//     ArtifactGenerator) are read for the units naming them;
//   - Flux's own controllers (objects labelled app.kubernetes.io/part-of:
//     flux, gotk-components.yaml; their Namespace excepted, which other
//     objects live in) are not installed, unless Options.FluxControllers;
//   - the objects of Flux's other controllers and of Flux Operator that a
//     push-based run stands in for or has no use for (LeftOutKinds: image
//     automation, notifications, FluxInstance, FluxReport).
//
// None of them is applied; each is listed in the result's notes. A unit
// whose HelmReleases go to the cluster's helm-controller (Charts nil)
// applies its sources, which that controller's source-controller reads.
// Objects of those kinds that an earlier run applied are orphaned, never
// deleted: a Kustomization deleted in a cluster that does run
// kustomize-controller would garbage-collect everything it applied.

// Flux API groups.
const (
	notificationsGroup    = "notification.toolkit.fluxcd.io"
	kustomizeGroup        = "kustomize.toolkit.fluxcd.io"
	sourceGroup           = "source.toolkit.fluxcd.io"
	sourceExtensionsGroup = "source.extensions.fluxcd.io"
	imageGroup            = "image.toolkit.fluxcd.io"
	operatorGroup         = "fluxcd.controlplane.io"
	partOfLabel           = "app.kubernetes.io/part-of"
)

// Why a unit of a configuration leaves out the objects of LeftOutKinds.
const (
	WhyImageAutomation = "Flux image automation: not applied: no image-reflector or image-automation controller acts on it here, and a run writes nothing back to Git ($imagepolicy markers are left as they are)"
	WhyReceiver        = "a Flux notification Receiver: not applied: a webhook into the cluster has no meaning for a run pushed from CI"
	WhyNotification    = "a Flux notification Provider or Alert: not applied: read by the run, which posts its units' events to it"
	WhyFluxInstance    = "Flux Operator's FluxInstance: not applied: this run stands in for the controllers it installs; its spec.sync is read as Flux's own sync source"
	WhyFluxReport      = "Flux Operator's FluxReport: not applied: the operator writes it about the controllers it runs"
	WhyResourceSet     = "Flux Operator's ResourceSet: not applied: expanded by this run, the objects it generates applied as the unit's own"
	WhyInputProvider   = "Flux Operator's ResourceSetInputProvider: not applied: read by this run for the ResourceSets naming it"
)

// LeftOutKinds are the kinds of Flux's other controllers and of Flux
// Operator that a unit of a configuration never applies, each with why:
// nothing in the cluster acts on them in a push-based run (or the run
// itself reads them), and a custom resource of a kind the cluster may
// not serve would fail the unit. Objects of these kinds an earlier run
// applied are orphaned, never deleted (see splitFlux).
var LeftOutKinds = map[schema.GroupKind]string{
	{Group: imageGroup, Kind: "ImageRepository"}:       WhyImageAutomation,
	{Group: imageGroup, Kind: "ImagePolicy"}:           WhyImageAutomation,
	{Group: imageGroup, Kind: "ImageUpdateAutomation"}: WhyImageAutomation,
	{Group: notificationsGroup, Kind: "Receiver"}:      WhyReceiver,
	{Group: notificationsGroup, Kind: "Provider"}:      WhyNotification,
	{Group: notificationsGroup, Kind: "Alert"}:         WhyNotification,
	{Group: operatorGroup, Kind: "FluxInstance"}:       WhyFluxInstance,
	{Group: operatorGroup, Kind: "FluxReport"}:         WhyFluxReport,
	resourceset.SetKind:                                WhyResourceSet,
	resourceset.ProviderKind:                           WhyInputProvider,
}

// fluxSources are the source kinds units read.
var fluxSources = map[schema.GroupKind]bool{
	{Group: sourceGroup, Kind: "GitRepository"}:               true,
	{Group: sourceGroup, Kind: "OCIRepository"}:               true,
	{Group: sourceGroup, Kind: "Bucket"}:                      true,
	{Group: sourceGroup, Kind: "ExternalArtifact"}:            true,
	{Group: sourceExtensionsGroup, Kind: "ArtifactGenerator"}: true,
	{Group: sourceExtensionsGroup, Kind: "ExternalArtifact"}:  true,
}

var fluxInstance = schema.GroupKind{Group: operatorGroup, Kind: "FluxInstance"}

// lockdownControllers are the Deployments of Flux's controllers whose
// flags FluxObjects returns: the multi-tenancy lockdown a configuration
// declares (config.Lockdown).
var lockdownControllers = map[string]bool{"kustomize-controller": true, "helm-controller": true, "notification-controller": true}

// isNotification says whether gk is a notification Provider or Alert,
// which the run reads to post its units' events (see notify).
func isNotification(gk schema.GroupKind) bool {
	return gk.Group == notificationsGroup && (gk.Kind == "Provider" || gk.Kind == "Alert")
}

// IsKustomization says whether gk is a Flux Kustomization.
func IsKustomization(gk schema.GroupKind) bool {
	return gk.Group == kustomizeGroup && gk.Kind == "Kustomization"
}

// RunByConfiguration says why a unit of a configuration does not apply
// u, one of the Flux objects its build emits ("" when it applies it).
func RunByConfiguration(u *unstructured.Unstructured, opts Options) string {
	gk := u.GroupVersionKind().GroupKind()
	switch {
	case IsKustomization(gk):
		return "a Flux Kustomization: run as a unit of this run, not applied"
	case fluxSources[gk] && opts.Charts != nil:
		return "a Flux source: read by the units naming it, not applied"
	case LeftOutKinds[gk] != "":
		return LeftOutKinds[gk]
	case u.GetLabels()[partOfLabel] == "flux" && gk != (schema.GroupKind{Kind: "Namespace"}) && !opts.FluxControllers:
		return "part of Flux's own controllers (app.kubernetes.io/part-of: flux): not installed, since this run stands in for them (installing them is an option of the run)"
	}
	return ""
}

// LeftOut is a Flux object of the build that the unit does not apply.
type LeftOut struct {
	ID  object.ID
	Why string
}

// leaveOutFlux takes the objects opts.RunFlux leaves out of rendered,
// and records them on it.
func leaveOutFlux(rendered *Rendered, opts Options) {
	if !opts.RunFlux {
		return
	}
	kept := rendered.Objects[:0]
	for _, u := range rendered.Objects {
		if why := RunByConfiguration(u, opts); why != "" {
			id := object.IDOf(u)
			rendered.LeftOut = append(rendered.LeftOut, LeftOut{ID: id, Why: why})
			delete(rendered.Sources, id)
			delete(rendered.SecretFields, id)
			continue
		}
		kept = append(kept, u)
	}
	clear(rendered.Objects[len(kept):])
	rendered.Objects = kept
}

// noteLeftOut says in the result what the build emitted and the unit
// does not apply, a line per reason.
func (r *run) noteLeftOut(left []LeftOut) {
	byWhy := map[string][]string{}
	var order []string
	for _, l := range left {
		if _, ok := byWhy[l.Why]; !ok {
			order = append(order, l.Why)
		}
		byWhy[l.Why] = append(byWhy[l.Why], l.ID.String())
	}
	for _, why := range order {
		ids := byWhy[why]
		const shown = 5
		list := strings.Join(ids[:min(len(ids), shown)], ", ")
		if len(ids) > shown {
			list += fmt.Sprintf(" and %d more", len(ids)-shown)
		}
		r.note("%s: %s", list, why)
	}
}

// orphanFlux takes out of stale the entries of Flux objects a unit of a
// configuration no longer applies (see RunByConfiguration): they leave
// the inventory without being deleted, and the result says so. It
// returns the rest.
func (r *run) orphanFlux(stale []inventory.Entry) []inventory.Entry {
	split := splitFlux
	if !r.opts.RunFlux {
		split = splitResourceSets // expanded by every unit (see expandResourceSets)
	}
	kept, orphaned := split(stale)
	if len(orphaned) > 0 {
		ids := make([]string, len(orphaned))
		for i, e := range orphaned {
			ids[i] = e.ID.String()
		}
		r.note("%s: left in the cluster and taken out of the inventory, not deleted: an earlier run applied it as an object, which a run of the configuration no longer does (a Kustomization deleted where kustomize-controller runs would delete everything it applied)", strings.Join(ids, ", "))
	}
	return kept
}

// splitFlux splits entries into those of Flux Kustomizations, sources,
// LeftOutKinds and Flux Operator's kinds (ResourceSets are expanded, see
// expandResourceSets) (orphaned) and the rest (kept).
func splitFlux(entries []inventory.Entry) (kept, orphaned []inventory.Entry) {
	for _, e := range entries {
		gk := schema.GroupKind{Group: e.ID.Group, Kind: e.ID.Kind}
		if IsKustomization(gk) || fluxSources[gk] || LeftOutKinds[gk] != "" || gk.Group == operatorGroup {
			orphaned = append(orphaned, e)
			continue
		}
		kept = append(kept, e)
	}
	return kept, orphaned
}

// splitResourceSets splits entries into those of ResourceSets and their
// input providers (orphaned) and the rest (kept).
func splitResourceSets(entries []inventory.Entry) (kept, orphaned []inventory.Entry) {
	for _, e := range entries {
		gk := schema.GroupKind{Group: e.ID.Group, Kind: e.ID.Kind}
		if gk == resourceset.SetKind || gk == resourceset.ProviderKind {
			orphaned = append(orphaned, e)
			continue
		}
		kept = append(kept, e)
	}
	return kept, orphaned
}

// SealedSecret says whether Secret u holds SOPS ciphertext (ENC[...]):
// its values cannot be read before the unit's own run decrypts them.
func SealedSecret(u *unstructured.Unstructured) bool {
	for _, field := range []string{"data", "stringData"} {
		values, _, _ := unstructured.NestedMap(u.Object, field)
		for _, v := range values {
			if s, ok := v.(string); ok && strings.HasPrefix(s, "ENC[") {
				return true
			}
		}
	}
	return false
}

// FluxObjects renders the unit (unless it is a chart: see buildUnit) with the values it substitutes, as a run
// would, without its charts and without decrypting (see RenderSealed),
// and returns the Flux objects of its build that a configuration reads:
// Kustomizations, sources, notification Providers and Alerts, and the
// ConfigMaps and Secrets Kustomizations substitute from and sources read
// their credentials from (those holding SOPS ciphertext too: SealedSecret
// tells them, whose values cannot be read here, only that the unit
// creates them); and the ServiceAccounts, which the Kustomizations it
// emits may impersonate (for messages: see Options.ServiceAccountBy) and
// pull sources with; and the Deployments of kustomize-, helm- and
// notification-controller, whose flags are the multi-tenancy lockdown the
// configuration declares.
// Its build is saved in opts.Builds, for the unit's run to render from.
func FluxObjects(ctx context.Context, opts Options) (objs []*unstructured.Unstructured, sources map[object.ID]string, err error) {
	if helm.IsChart(opts.Dir.Path) {
		return nil, nil, nil // a chart's unit builds to its HelmRelease
	}
	r := newRun(opts, result.ModeDiff)
	subs, err := r.variables(ctx)
	if err != nil {
		return nil, nil, err
	}
	o := r.renderOptions(subs)
	o.Charts, o.RunFlux = nil, false
	// No cluster resolved the run's namespace: the unit's, as given, is
	// what a ResourceSet without one is read in (see expandResourceSets).
	o.Namespace = opts.Namespace
	rendered, err := renderSealed(ctx, o, true)
	if err != nil {
		return nil, nil, err
	}
	sources = map[object.ID]string{}
	for _, u := range rendered.Objects {
		gk := u.GroupVersionKind().GroupKind()
		id := object.IDOf(u)
		switch {
		case IsKustomization(gk), gk.Group == sourceGroup, gk.Group == sourceExtensionsGroup, gk == fluxInstance, isNotification(gk):
		case gk == schema.GroupKind{Kind: "ConfigMap"}, gk == schema.GroupKind{Kind: "ServiceAccount"}:
		case gk == schema.GroupKind{Group: "apps", Kind: "Deployment"} && lockdownControllers[u.GetName()]:
			// Flux's controllers, whose flags declare the multi-tenancy
			// lockdown (config.Lockdown).
		case gk == schema.GroupKind{Kind: "Secret"}:
		default:
			continue
		}
		objs = append(objs, u)
		sources[id] = rendered.Sources[id]
	}
	return objs, sources, nil
}
