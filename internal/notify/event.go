package notify

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Events are what Flux's controllers would send about the objects a unit
// stands for: its Kustomization (as kustomize-controller) and the
// HelmReleases it rendered (as helm-controller), in the shape of
// fluxcd/pkg/apis/event v1beta1, with Flux's reasons and revision
// metadata. A run sends them only on a real change or an error, never
// on a no-op: one event per object and run.

// Source is the Flux Kustomization a unit runs, as its events name it.
type Source struct {
	// APIVersion is the Kustomization's (kustomize.toolkit.fluxcd.io/v1,
	// v1beta2...).
	APIVersion      string
	Namespace, Name string
	// Labels select it (an Alert's eventSources[].matchLabels);
	// annotations prefixed event.toolkit.fluxcd.io/ add to its events'
	// metadata, as in Flux.
	Labels, Annotations map[string]string
}

// Event is an event with the labels of its involved object, which Alerts
// may select it by.
type Event struct {
	eventv1.Event
	Labels map[string]string
}

// Reporting controllers, as Flux's events name them; ReportingInstance
// says it was this run.
const (
	kustomizeController = "kustomize-controller"
	helmController      = "helm-controller"
	ReportingInstance   = "kustomize-deploy"
	kustomizeGroup      = "kustomize.toolkit.fluxcd.io"
	helmGroup           = "helm.toolkit.fluxcd.io"
	helmAPIVersion      = helmGroup + "/v2"
)

// Flux's reasons for what a run did (fluxcd/pkg/apis/meta, helm-controller).
const (
	ReasonReconciliationSucceeded = "ReconciliationSucceeded"
	ReasonReconciliationFailed    = "ReconciliationFailed"
	ReasonDriftDetected           = "DriftDetected"
	ReasonInstallSucceeded        = "InstallSucceeded"
	ReasonUpgradeSucceeded        = "UpgradeSucceeded"
	ReasonInstallFailed           = "InstallFailed"
	ReasonUpgradeFailed           = "UpgradeFailed"
)

// maxLines bounds the objects a change set lists (Flux caps a message at
// 39,000 characters).
const maxLines = 100

// Events are the events of a run of src that ended with res, at now:
// none for a diff, a delete, a unit skipped on purpose (suspended,
// pinned, out of order) or cancelled, or a run that changed nothing.
func Events(src Source, res *result.Result, now time.Time) []Event {
	if res.Mode != result.ModeApply && res.Mode != result.ModeDrift {
		return nil
	}
	if res.Reason.SkipsByDesign() || res.Reason == result.ReasonCancelled {
		return nil
	}
	ks := Event{Event: eventv1.Event{
		InvolvedObject: corev1.ObjectReference{
			Kind: KindKustomization, APIVersion: cmp.Or(src.APIVersion, kustomizeGroup+"/v1"),
			Namespace: src.Namespace, Name: src.Name, UID: pseudoUID(KindKustomization, src.Namespace, src.Name),
		},
		Timestamp:           metav1.NewTime(now.UTC()),
		ReportingController: kustomizeController,
		ReportingInstance:   ReportingInstance,
		Metadata:            objectMetadata(src.Annotations),
	}, Labels: src.Labels}
	if rev := fluxRevision(res.Revision); rev != "" {
		ks.Metadata[kustomizeGroup+"/"+eventv1.MetaRevisionKey] = rev
	}
	switch {
	case res.Failed() && res.Reason == result.ReasonDependencyNotReady:
		// kustomize-controller says so as info, and retries.
		ks.Severity, ks.Reason, ks.Message = SeverityInfo, string(res.Reason), res.Message
	case res.Failed():
		ks.Severity, ks.Reason, ks.Message = SeverityError, failureReason(res.Reason), res.Message
	case res.Mode == result.ModeDrift && res.Reason == result.ReasonDiffSucceed && res.Drifted:
		// Drift reported, not corrected: helm-controller's warning.
		ks.Severity, ks.Reason = SeverityError, ReasonDriftDetected
		ks.Message = "Cluster state has drifted from the desired state (reported, not corrected):\n" + changeSet(res.Entries)
	case res.Ready && res.Reason == result.ReasonApplySucceed && res.Changed():
		ks.Severity, ks.Reason, ks.Message = SeverityInfo, ReasonReconciliationSucceeded, changeSet(res.Entries)
	default:
		return nil
	}
	out := []Event{ks}
	for _, rel := range res.Releases {
		if e, ok := releaseEvent(rel, res, ks); ok {
			out = append(out, e)
		}
	}
	return out
}

// releaseEvent is the event of a HelmRelease the run rendered, as
// helm-controller sends on an install or upgrade, when the release's
// objects changed, or failed to apply.
func releaseEvent(rel result.Release, res *result.Result, ks Event) (Event, bool) {
	_, nsName, _ := strings.Cut(rel.HelmRelease, "/") // HelmRelease/namespace/name
	ns, name, _ := strings.Cut(nsName, "/")
	var changed, failed []string
	install := true
	for _, e := range res.Entries {
		if e.Release != rel.HelmRelease {
			continue
		}
		switch e.Action {
		case result.Created:
			changed = append(changed, e.Object.String())
		case result.Configured, result.Deleted:
			changed, install = append(changed, e.Object.String()), false
		case result.Failed:
			failed = append(failed, e.Object.String()+": "+e.Reason)
		default:
			install = false
		}
	}
	e := Event{Event: eventv1.Event{
		InvolvedObject: corev1.ObjectReference{
			Kind: KindHelmRelease, APIVersion: helmAPIVersion, Namespace: ns, Name: name,
			UID: pseudoUID(KindHelmRelease, ns, name),
		},
		Timestamp:           ks.Timestamp,
		ReportingController: helmController,
		ReportingInstance:   ReportingInstance,
		Metadata:            objectMetadata(rel.Annotations),
	}, Labels: rel.Labels}
	e.Metadata[helmGroup+"/"+eventv1.MetaRevisionKey] = rel.Version
	if rel.Digest != "" {
		e.Metadata[helmGroup+"/oci-digest"] = rel.Digest
	}
	action, reason := "upgrade", ReasonUpgradeSucceeded
	if install {
		action, reason = "install", ReasonInstallSucceeded
	}
	release := fmt.Sprintf("%s/%s", rel.Namespace, rel.Name)
	switch {
	case len(failed) > 0:
		e.Severity, e.Reason = SeverityError, ReasonUpgradeFailed
		if install {
			e.Reason = ReasonInstallFailed
		}
		e.Message = fmt.Sprintf("Helm %s failed for release %s with chart %s@%s: %s", action, release, rel.Chart, rel.Version, strings.Join(failed, "; "))
	case len(changed) > 0 && res.Ready && res.Reason == result.ReasonApplySucceed:
		e.Severity, e.Reason = SeverityInfo, reason
		e.Message = fmt.Sprintf("Helm %s succeeded for release %s with chart %s@%s", action, release, rel.Chart, rel.Version)
	default:
		return Event{}, false
	}
	return e, true
}

// failureReason is Flux's reason for a failed run that ended with r.
func failureReason(r result.Reason) string {
	switch r {
	case result.ReasonApplyFailed, result.ReasonLocked:
		return ReasonReconciliationFailed
	}
	return string(r)
}

// changeSet lists the objects a run changed, as ssa's ChangeSet does
// ("Deployment/apps/web configured"), at most maxLines of them.
func changeSet(entries []result.Entry) string {
	var lines []string
	for _, e := range entries {
		switch e.Action {
		case result.Created, result.Configured, result.Deleted:
			lines = append(lines, e.Object.String()+" "+string(e.Action))
		}
	}
	if len(lines) > maxLines {
		lines = append(lines[:maxLines], fmt.Sprintf("(and %d more)", len(lines)-maxLines))
	}
	return strings.Join(lines, "\n")
}

// objectMetadata are the annotations of an object prefixed with the
// event API group, which Flux's event recorder adds to its events.
func objectMetadata(annotations map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		if strings.HasPrefix(k, eventv1.Group+"/") {
			out[k] = annotations[k]
		}
	}
	return out
}

var bareHash = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// fluxRevision is rev as source-controller writes a Git revision: a bare
// commit hash becomes sha1:<hash> (sha256:<hash>); others are kept.
func fluxRevision(rev string) string {
	if bareHash.MatchString(rev) {
		if len(rev) == 64 {
			return "sha256:" + rev
		}
		return "sha1:" + rev
	}
	return rev
}

// pseudoUID stands for the UID of an object no controller created: the
// same for the same object in every run, so that receivers deduplicating
// by it (PagerDuty's dedup_key) see one object.
func pseudoUID(kind, namespace, name string) types.UID {
	return types.UID(uuid.NewSHA1(uuid.NameSpaceURL, []byte("kustomize-deploy:"+kind+"/"+namespace+"/"+name)).String())
}
