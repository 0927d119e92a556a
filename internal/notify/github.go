package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/github"
)

// GitHub: a commit status on the revision an event names (github), or a
// repository_dispatch event carrying the event (githubdispatch), on the
// repository the address names (https://github.com/owner/repo, or a
// GitHub Enterprise Server's), with the Secret's token or, for a
// repository on the job's GitHub server, the job's.

// gitHubRepo is the API and repository of an address.
func gitHubRepo(address string) (api, owner, repo string, err error) {
	u, perr := url.Parse(address)
	if perr != nil || u.Host == "" {
		return "", "", "", errors.New("the address is not a repository's URL")
	}
	scheme := u.Scheme
	if scheme == "ssh" || scheme == "" {
		scheme = "https"
	}
	parts := strings.Split(strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git"), "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", "", errors.New("the address is not a repository's URL (https://github.com/owner/repo)")
	}
	api = scheme + "://" + u.Host + "/api/v3/"
	if strings.EqualFold(u.Hostname(), "github.com") {
		api = github.DefaultAPIURL
	}
	return api, parts[0], parts[1], nil
}

func gitHubClient(t *target) (*github.Client, string, string, error) {
	api, owner, repo, err := gitHubRepo(t.address)
	if err != nil {
		return nil, "", "", err
	}
	api = cmp.Or(t.gitHubAPI, api)
	c, err := github.New(t.token, api, github.WithHTTPClient(&http.Client{Transport: t.transport}))
	return c, owner, repo, err
}

// commitHash finds the commit of a Flux revision: main@sha1:<hex>,
// sha1:<hex>, a bare hash, or the legacy main/<hex>.
var commitHash = regexp.MustCompile(`(?:^|@|:|/)([0-9a-f]{40}|[0-9a-f]{64})$`)

// postGitHubStatus sets a commit status on the event's revision:
// success for info, failure for error; its context is the object's and
// the Provider's, its description the reason in words.
func postGitHubStatus(ctx context.Context, t *target, e eventv1.Event) error {
	if e.Reason == "Progressing" {
		return nil
	}
	rev, ok := e.GetRevision()
	if !ok {
		return errors.New("missing revision metadata")
	}
	m := commitHash.FindStringSubmatch(rev)
	if m == nil {
		return fmt.Errorf("failed to extract commit hash from '%s' revision", rev)
	}
	state := github.StateSuccess
	switch e.Severity {
	case eventv1.EventSeverityInfo:
	case eventv1.EventSeverityError:
		state = github.StateFailure
	default:
		return errors.New("can't convert to github state")
	}
	c, owner, repo, err := gitHubClient(t)
	if err != nil {
		return err
	}
	_, desc := nameAndDescription(e)
	uid := strings.Split(string(pseudoUID("Provider", t.p.Ref.Namespace, t.p.Ref.Name)), "-")[0]
	id := strings.ToLower(fmt.Sprintf("%s/%s/%s", e.InvolvedObject.Kind, e.InvolvedObject.Name, uid))
	return c.SetStatus(ctx, owner, repo, m[1], github.Status{State: state, Context: id, Description: desc})
}

// postGitHubDispatch sends a repository_dispatch event named
// Kind/name.namespace, the event as its client_payload.
func postGitHubDispatch(ctx context.Context, t *target, e eventv1.Event) error {
	c, owner, repo, err := gitHubClient(t)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(e)
	if err != nil {
		return err
	}
	eventType := fmt.Sprintf("%s/%s.%s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.InvolvedObject.Namespace)
	return c.Dispatch(ctx, owner, repo, eventType, payload)
}
