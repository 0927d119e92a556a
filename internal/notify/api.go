package notify

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
)

// The notification API (notification.toolkit.fluxcd.io), as far as a run
// reads it: v1beta3 and v1beta2 Providers and Alerts share these fields.

// Provider is a Flux notification Provider: where and how events are
// posted.
type Provider struct {
	Ref  config.Ref
	File string
	Line int
	// Emitter is the unit whose build emitted it ("" for one of the
	// configuration's files): its Secrets are read from that unit's
	// cluster.
	Emitter config.Ref
	Spec    ProviderSpec
	// timeout bounds each post: spec.timeout, else defaultTimeout.
	timeout time.Duration
}

// ProviderSpec is a Provider's spec.
type ProviderSpec struct {
	Type               string    `json:"type"`
	Interval           string    `json:"interval,omitempty"`
	Channel            string    `json:"channel,omitempty"`
	Username           string    `json:"username,omitempty"`
	Address            string    `json:"address,omitempty"`
	Timeout            string    `json:"timeout,omitempty"`
	Proxy              string    `json:"proxy,omitempty"`
	ProxySecretRef     *LocalRef `json:"proxySecretRef,omitempty"`
	SecretRef          *LocalRef `json:"secretRef,omitempty"`
	CertSecretRef      *LocalRef `json:"certSecretRef,omitempty"`
	Suspend            bool      `json:"suspend,omitempty"`
	CommitStatusExpr   string    `json:"commitStatusExpr,omitempty"`
	ServiceAccountName string    `json:"serviceAccountName,omitempty"`
}

// LocalRef names an object in the referrer's namespace.
type LocalRef struct {
	Name string `json:"name"`
}

// Alert is a Flux notification Alert: which events go to a Provider.
type Alert struct {
	Ref  config.Ref
	File string
	Line int
	Spec AlertSpec

	// inclusion and exclusion are the lists' expressions that compile;
	// warnings say which did not (notification-controller skips them too).
	inclusion, exclusion []*regexp.Regexp
	warnings             []string
}

// AlertSpec is an Alert's spec.
type AlertSpec struct {
	ProviderRef   LocalRef          `json:"providerRef"`
	EventSeverity string            `json:"eventSeverity,omitempty"`
	EventSources  []EventSource     `json:"eventSources"`
	InclusionList []string          `json:"inclusionList,omitempty"`
	ExclusionList []string          `json:"exclusionList,omitempty"`
	EventMetadata map[string]string `json:"eventMetadata,omitempty"`
	Summary       string            `json:"summary,omitempty"`
	Suspend       bool              `json:"suspend,omitempty"`
}

// EventSource selects the objects whose events an Alert takes.
type EventSource struct {
	APIVersion  string            `json:"apiVersion,omitempty"`
	Kind        string            `json:"kind"`
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// Severities of events, as an Alert's eventSeverity names them.
const (
	SeverityInfo  = "info"
	SeverityError = "error"
)

// defaultTimeout is a Provider's timeout when spec.timeout is not set, as
// notification-controller's (Provider.GetTimeout).
const defaultTimeout = 15 * time.Second

// maxTimeout bounds a Provider's spec.timeout: the run waits for its
// posts before it reports, and a receiver that never answers must not
// hold it for hours.
const maxTimeout = 5 * time.Minute

// Kinds whose events a run sends, with the group their metadata keys
// carry (see events).
const (
	KindKustomization = "Kustomization"
	KindHelmRelease   = "HelmRelease"
)

// sourceKinds are the kinds an Alert's eventSources may name (the API's
// enum); the run sends events of KindKustomization and KindHelmRelease
// only, the others never match.
var sourceKinds = []string{"Bucket", "GitRepository", "Kustomization", "HelmRelease", "HelmChart", "HelmRepository",
	"ImageRepository", "ImagePolicy", "ImageUpdateAutomation", "OCIRepository", "ArtifactGenerator", "ExternalArtifact",
	"FluxInstance", "ResourceSet", "ResourceSetInputProvider"}

// document is the part of a notification document the run reads.
type document[S any] struct {
	Spec S `json:"spec"`
}

// readProvider decodes n, a Provider, and checks what the API server
// would refuse.
func readProvider(n *config.Notification) (*Provider, error) {
	var o document[ProviderSpec]
	if err := yaml.Unmarshal(n.Raw, &o); err != nil {
		return nil, err
	}
	p := &Provider{Ref: n.Ref, File: n.File, Line: n.Line, Spec: o.Spec}
	if len(n.EmittedBy) > 0 {
		p.Emitter = n.EmittedBy[len(n.EmittedBy)-1]
	}
	s := &p.Spec
	switch {
	case s.Type == "":
		return p, fmt.Errorf("spec.type: required")
	case s.SecretRef != nil && s.SecretRef.Name == "":
		return p, fmt.Errorf("spec.secretRef.name: required")
	}
	p.timeout = defaultTimeout
	if s.Timeout != "" {
		d, err := time.ParseDuration(s.Timeout)
		if err != nil || d <= 0 {
			return p, fmt.Errorf("spec.timeout: %q is not a duration", s.Timeout)
		}
		p.timeout = min(d, maxTimeout)
	}
	return p, nil
}

// readAlert decodes n, an Alert, and checks what the API server would
// refuse; its inclusion and exclusion lists are compiled.
func readAlert(n *config.Notification) (*Alert, error) {
	var o document[AlertSpec]
	if err := yaml.Unmarshal(n.Raw, &o); err != nil {
		return nil, err
	}
	a := &Alert{Ref: n.Ref, File: n.File, Line: n.Line, Spec: o.Spec}
	s := &a.Spec
	if s.EventSeverity == "" {
		s.EventSeverity = SeverityInfo
	}
	var problems []string
	if s.ProviderRef.Name == "" {
		problems = append(problems, "spec.providerRef.name: required")
	}
	if s.EventSeverity != SeverityInfo && s.EventSeverity != SeverityError {
		problems = append(problems, fmt.Sprintf("spec.eventSeverity: %q is neither info nor error", s.EventSeverity))
	}
	if len(s.EventSources) == 0 {
		problems = append(problems, "spec.eventSources: required")
	}
	for i, src := range s.EventSources {
		if !slices.Contains(sourceKinds, src.Kind) {
			problems = append(problems, fmt.Sprintf("spec.eventSources[%d].kind: %q is not a kind of Flux object", i, src.Kind))
		}
		if src.Name == "" {
			problems = append(problems, fmt.Sprintf("spec.eventSources[%d].name: required (a name, or *)", i))
		}
	}
	if len(problems) > 0 {
		return a, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	compile := func(field string, exprs []string) []*regexp.Regexp {
		var out []*regexp.Regexp
		for i, e := range exprs {
			re, err := regexp.Compile(e)
			if err != nil {
				a.warnings = append(a.warnings, fmt.Sprintf("%s[%d] is skipped: %v", field, i, err))
				continue
			}
			out = append(out, re)
		}
		return out
	}
	a.inclusion = compile("spec.inclusionList", s.InclusionList)
	a.exclusion = compile("spec.exclusionList", s.ExclusionList)
	return a, nil
}
