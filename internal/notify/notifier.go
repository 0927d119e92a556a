package notify

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Options say how a Notifier reaches Providers.
type Options struct {
	// Secret reads the Secret name in the namespace of p (its secretRef,
	// proxySecretRef or certSecretRef): the front end's stand-ins, the
	// configuration's files, else the cluster. Nil reads none.
	Secret func(ctx context.Context, p *Provider, name string) (map[string]string, error)
	// GitHubToken is the job's token: github and githubdispatch Providers
	// whose Secret holds no token use it, for repositories on
	// GitHubServer (e.g. https://github.com) only. GitHubAPI is that
	// server's REST API (GITHUB_API_URL), used for its repositories; ""
	// derives it from the address, as for other servers.
	GitHubToken, GitHubServer, GitHubAPI string
	// Mask is called with every secret value as soon as it is read:
	// addresses of webhooks, tokens, passwords, headers.
	Mask func(values []string)
	// Redact hides the run's secret values in what an event says (its
	// message and metadata) before it is posted; nil leaves it as the
	// engine redacted it.
	Redact func(string) string
	// Transport is the base HTTP transport; nil means
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Retries are how many times a post is tried again after a network
	// error, 429 or 5xx, waiting RetryWait, then twice as long each time,
	// within the Provider's timeout.
	Retries   int
	RetryWait time.Duration
	// TelegramAPI is the Telegram Bot API; "" means
	// https://api.telegram.org, which notification-controller always uses.
	TelegramAPI string
	// Now is the clock events are stamped with; nil means time.Now.
	Now func() time.Time
	// NoCrossNamespaceRefs is notification-controller's
	// --no-cross-namespace-refs (Flux's multi-tenancy lockdown): an Alert
	// takes no event of an object in another namespace than its own,
	// whatever its eventSources say (internal/server/event_handlers.go,
	// getNotificationParams, which discards it).
	NoCrossNamespaceRefs bool
}

// DefaultOptions are the options of a run: two retries, a second apart
// then two.
func DefaultOptions() Options {
	return Options{Retries: 2, RetryWait: time.Second}
}

// Notifier posts the events of a run's units to the Providers of the
// Alerts that take them. It is safe for concurrent use.
type Notifier struct {
	opts      Options
	providers map[config.Ref][]*Provider
	alerts    []*Alert
	// Warnings say which Providers and Alerts cannot be used, and why.
	Warnings []string

	mu      sync.Mutex
	targets map[*Provider]*targetOnce
	masker  *mask.Masker
}

// targetOnce is a Provider's target, read once it can be: a Secret a
// unit applies later in the run is read again by the next post.
type targetOnce struct {
	mu sync.Mutex
	t  *target
}

// New reads the Providers and Alerts found in a configuration. One that
// the API server would refuse, or that is ambiguous (two Providers of one
// name, defined differently), is left out with a warning: notifications
// never fail a run.
func New(found []*config.Notification, opts Options) *Notifier {
	n := &Notifier{opts: opts, providers: map[config.Ref][]*Provider{}, targets: map[*Provider]*targetOnce{}, masker: mask.New()}
	if n.opts.TelegramAPI == "" {
		n.opts.TelegramAPI = "https://api.telegram.org"
	}
	if n.opts.Now == nil {
		n.opts.Now = time.Now
	}
	for _, f := range found {
		where := fmt.Sprintf("%s %s (%s)", f.Kind, f.Ref, at(f.File, f.Line))
		switch f.Kind {
		case config.NotificationProvider:
			p, err := readProvider(f)
			if err != nil {
				n.Warnings = append(n.Warnings, fmt.Sprintf("%s is not used: %v", where, err))
				continue
			}
			n.providers[p.Ref] = append(n.providers[p.Ref], p)
		case config.NotificationAlert:
			a, err := readAlert(f)
			if err != nil {
				n.Warnings = append(n.Warnings, fmt.Sprintf("%s is not used: %v", where, err))
				continue
			}
			for _, w := range a.warnings {
				n.Warnings = append(n.Warnings, where+": "+w)
			}
			n.alerts = append(n.alerts, a)
		}
	}
	for ref, ps := range n.providers {
		if len(ps) > 1 {
			var places []string
			for _, p := range ps {
				places = append(places, at(p.File, p.Line))
			}
			n.Warnings = append(n.Warnings, fmt.Sprintf("Provider %s is defined more than once, differently (%s): no Alert posts to it", ref, strings.Join(places, ", ")))
		}
	}
	for _, a := range n.alerts {
		if _, ok := n.providers[a.providerRef()]; !ok {
			n.Warnings = append(n.Warnings, fmt.Sprintf("Alert %s (%s): Provider %s is not in the configuration: nothing is posted for it", a.Ref, at(a.File, a.Line), a.providerRef()))
		}
		// Sources of other kinds (GitRepository...) are common beside these
		// and match nothing, quietly; an Alert of no other is warned about.
		var kinds []string
		for _, src := range a.Spec.EventSources {
			if src.Kind == KindKustomization || src.Kind == KindHelmRelease {
				kinds = nil
				break
			}
			if !slices.Contains(kinds, src.Kind) {
				kinds = append(kinds, src.Kind)
			}
		}
		if len(kinds) > 0 {
			n.Warnings = append(n.Warnings, fmt.Sprintf("Alert %s (%s) takes events of %s only: it is never posted for, since a run sends events of Kustomizations and HelmReleases only", a.Ref, at(a.File, a.Line), strings.Join(kinds, ", ")))
		}
	}
	slices.Sort(n.Warnings)
	return n
}

// Active says whether n has any Alert to post for.
func (n *Notifier) Active() bool { return n != nil && len(n.alerts) > 0 }

func (a *Alert) providerRef() config.Ref {
	return config.Ref{Namespace: a.Ref.Namespace, Name: a.Spec.ProviderRef.Name}
}

// Delivery is one event posted (or not) to one Provider for one Alert.
type Delivery struct {
	Alert, Provider config.Ref
	// Type is the Provider's spec.type.
	Type  string
	Event Event
	// Suspended says the Provider is suspended: nothing was posted.
	Suspended bool
	// Err says why the post failed, its secrets masked.
	Err error
}

func (d Delivery) String() string {
	subject := fmt.Sprintf("%s event of %s/%s/%s (%s) to Provider %s (%s, for Alert %s)", d.Event.Severity,
		d.Event.InvolvedObject.Kind, d.Event.InvolvedObject.Namespace, d.Event.InvolvedObject.Name, d.Event.Reason, d.Provider, d.Type, d.Alert)
	switch {
	case d.Suspended:
		return "not posted: " + subject + ": the Provider is suspended"
	case d.Err != nil:
		return "posting " + subject + " failed: " + d.Err.Error()
	}
	return "posted " + subject
}

// Notify posts the events of src's run that ended with res (see Events)
// to the Provider of every Alert that takes them, each post bounded by
// the Provider's timeout, and returns what was posted. Failures are in
// the deliveries, never an error: a notification never fails a run.
func (n *Notifier) Notify(ctx context.Context, src Source, res *result.Result) []Delivery {
	if !n.Active() {
		return nil
	}
	var out []Delivery
	for _, e := range Events(src, res, n.opts.Now()) {
		for _, a := range n.alerts {
			if !a.matches(e) || n.opts.NoCrossNamespaceRefs && e.InvolvedObject.Namespace != a.Ref.Namespace {
				continue
			}
			ps := n.providers[a.providerRef()]
			if len(ps) != 1 {
				continue // warned about once, in Warnings
			}
			p := ps[0]
			d := Delivery{Alert: a.Ref, Provider: p.Ref, Type: p.Spec.Type, Event: e}
			d.Event.Metadata = metadata(e.Event, a)
			if p.Spec.Suspend {
				d.Suspended = true
				n.redact(&d.Event)
			} else {
				d.Err = n.post(ctx, p, &d.Event)
			}
			out = append(out, d)
		}
	}
	return out
}

// post sends e to p, within p's timeout, even when ctx is done (the run
// was cancelled, its failure is still told). e is redacted first, once
// p's own secrets are known.
func (n *Notifier) post(ctx context.Context, p *Provider, e *Event) error {
	send, ok := senders[p.Spec.Type]
	if !ok {
		n.redact(e)
		return fmt.Errorf("spec.type %s is not supported by kustomize-deploy (%s are)", p.Spec.Type, strings.Join(SupportedTypes(), ", "))
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
	defer cancel()
	t, err := n.targetOf(ctx, p)
	n.redact(e)
	if err == nil {
		err = send(ctx, t, e.Event)
	}
	if err == nil {
		return nil
	}
	// A receiver may quote what it was sent; errors say nothing secret.
	return maskedError{msg: n.masker.String(err.Error())}
}

func (n *Notifier) targetOf(ctx context.Context, p *Provider) (*target, error) {
	n.mu.Lock()
	o, ok := n.targets[p]
	if !ok {
		o = &targetOnce{}
		n.targets[p] = o
	}
	n.mu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.t != nil {
		return o.t, nil
	}
	t, err := n.target(ctx, p)
	if err != nil {
		return nil, err
	}
	o.t = t
	return t, nil
}

// redact hides secret values in e's message and metadata: the run's
// (Options.Redact) and the Providers' (a message never carries a
// webhook's address).
func (n *Notifier) redact(e *Event) {
	hide := n.masker.String
	if n.opts.Redact != nil {
		hide = func(s string) string { return n.masker.String(n.opts.Redact(s)) }
	}
	e.Message = hide(e.Message)
	for k, v := range e.Metadata {
		e.Metadata[k] = hide(v)
	}
}

// mask registers values with the run's masker and n's own.
func (n *Notifier) mask(values []string) {
	var kept []string
	for _, v := range values {
		if v != "" {
			kept = append(kept, v)
		}
	}
	n.masker.Add(kept...)
	if n.opts.Mask != nil && len(kept) > 0 {
		n.opts.Mask(kept)
	}
}

type maskedError struct{ msg string }

func (e maskedError) Error() string { return e.msg }

// SupportedTypes are the Provider types a run posts to, sorted.
func SupportedTypes() []string {
	var out []string
	for k := range senders {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func at(file string, line int) string {
	if line == 0 {
		return cmp.Or(file, "emitted")
	}
	return fmt.Sprintf("%s:%d", file, line)
}
