package resourceset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kustomize-deploy/kustomize-deploy/internal/github"
)

// A ResourceSetInputProvider's inputs are what the operator's
// ResourceSetInputProvider controller would export to its status:
//
//   - Static: one input set, its spec.defaultValues with an id. The
//     operator's id is the checksum of the object's UID, which an object
//     read from Git does not have: here it is the checksum of its name, as
//     the operator's own `flux-operator build resourceset` makes it.
//   - GitHubPullRequest: one per open pull request of the repository
//     spec.url names (id: its number; sha, branch: its head; title,
//     author, labels), GitHubBranch one per branch (id: the checksum of its
//     name; branch, sha), GitHubTag one per tag (id: the checksum of its
//     name; tag, sha); each filtered (see filter) and given
//     spec.defaultValues for the keys it lacks.
//
// GitHub is asked with the run's own GitHub client and token, never with
// another: spec.url must be a repository of the server that client talks
// to, or the token would go to a host nobody configured it for; the
// provider's spec.secretRef is not read. Every other type is refused by
// name. What GitHub answered is kept for the run (Cache), so that every
// rendering of the unit (finding the Kustomizations it generates, then
// running it) sees the same pull requests.

// GitHub lists what a repository holds (package github).
type GitHub interface {
	// WebURL is the server's address, as its repositories' URLs begin.
	WebURL() string
	OpenPulls(ctx context.Context, owner, repo string, visit func(github.Pull) bool) error
	Branches(ctx context.Context, owner, repo string, visit func(github.Ref) bool) error
	Tags(ctx context.Context, owner, repo string, visit func(github.Ref) bool) error
}

var _ GitHub = (*github.Client)(nil)

// ErrNoGitHub is wrapped by the error of a provider of a GitHub type in a
// run that has no GitHub client: no token was given. The front end says
// how to give one.
var ErrNoGitHub = errors.New("no GitHub token was given to read it with")

// Cache keeps what GitHub answered for each provider during one run; safe
// for concurrent use. The zero value is ready.
type Cache struct {
	mu      sync.Mutex
	answers map[string]*answer
}

// answer is one provider's listing, ready once done is closed.
type answer struct {
	done chan struct{}
	sets []map[string]any
	err  error
}

// get returns the input sets cached under key, or lists them with list:
// once for the run, callers asking meanwhile waiting for that listing. A
// listing that failed is not kept: the next caller asks again.
func (c *Cache) get(ctx context.Context, key string, list func() ([]map[string]any, error)) ([]map[string]any, error) {
	if c == nil {
		return list()
	}
	c.mu.Lock()
	a, ok := c.answers[key]
	if !ok {
		a = &answer{done: make(chan struct{})}
		if c.answers == nil {
			c.answers = map[string]*answer{}
		}
		c.answers[key] = a
		c.mu.Unlock()
		a.sets, a.err = list()
		if a.err != nil {
			c.mu.Lock()
			delete(c.answers, key)
			c.mu.Unlock()
		}
		close(a.done)
	} else {
		c.mu.Unlock()
		select {
		case <-a.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if a.err != nil {
		return nil, a.err
	}
	return cloneSets(a.sets), nil
}

func cloneSets(sets []map[string]any) []map[string]any {
	out := make([]map[string]any, len(sets))
	for i, s := range sets {
		out[i] = maps.Clone(s)
	}
	return out
}

// providerInputs are the input sets p exports, and whether they came from
// outside the build (GitHub).
func providerInputs(ctx context.Context, p *inputProvider, opts Options) (sets []map[string]any, external bool, err error) {
	defaults := p.Spec.DefaultValues
	switch p.Spec.Type {
	case TypeStatic:
		if p.Spec.URL != "" {
			return nil, false, errors.New("spec.url: must be empty for type Static")
		}
		set := maps.Clone(defaults)
		if set == nil {
			set = map[string]any{}
		}
		set["id"] = inputID(p.Metadata.Name)
		return []map[string]any{set}, false, nil
	case TypeGitHubPullRequest, TypeGitHubBranch, TypeGitHubTag:
		if p.Spec.Skip != nil && len(p.Spec.Skip.Labels) > 0 {
			return nil, true, errors.New("spec.skip is not honoured: it keeps the inputs the provider exported before, and a run has no earlier export to keep")
		}
		if p.Spec.CertSecretRef != nil {
			return nil, true, errors.New("spec.certSecretRef is not honoured: GitHub is reached with the run's own client")
		}
		sets, err := githubInputs(ctx, p, opts)
		return sets, true, err
	case "":
		return nil, false, errors.New("spec.type: required")
	}
	if slices.Contains(knownTypes, p.Spec.Type) {
		return nil, false, fmt.Errorf("spec.type %s is not read by this run: only Static, GitHubPullRequest, GitHubBranch and GitHubTag are", p.Spec.Type)
	}
	return nil, false, fmt.Errorf("spec.type %q: not a type of ResourceSetInputProvider", p.Spec.Type)
}

// githubInputs lists what p's repository holds and makes its input sets.
func githubInputs(ctx context.Context, p *inputProvider, opts Options) ([]map[string]any, error) {
	if opts.GitHub == nil {
		return nil, fmt.Errorf("type %s: %w", p.Spec.Type, ErrNoGitHub)
	}
	owner, repo, err := repository(p.Spec.URL, opts.GitHub.WebURL())
	if err != nil {
		return nil, err
	}
	f, err := newFilter(p.Spec.Filter)
	if err != nil {
		return nil, err
	}
	key, err := json.Marshal(struct {
		Type, URL string
		Filter    *filterSpec
	}{p.Spec.Type, p.Spec.URL, p.Spec.Filter})
	if err != nil {
		return nil, err
	}
	results, err := opts.Cache.get(ctx, string(key), func() ([]map[string]any, error) {
		return listGitHub(ctx, opts.GitHub, p.Spec.Type, owner, repo, f)
	})
	if err != nil {
		return nil, err
	}
	for _, r := range results {
		for k, v := range p.Spec.DefaultValues {
			if _, ok := r[k]; !ok {
				r[k] = v
			}
		}
	}
	return results, nil
}

// listGitHub lists what owner/repo holds of typ, filtered by f, as input
// sets without defaults.
func listGitHub(ctx context.Context, g GitHub, typ, owner, repo string, f *filter) ([]map[string]any, error) {
	var out []map[string]any
	switch typ {
	case TypeGitHubPullRequest:
		err := g.OpenPulls(ctx, owner, repo, func(pr github.Pull) bool {
			if !f.matchString(pr.HeadRef) || !f.matchLabels(pr.Labels) {
				return true
			}
			set := map[string]any{"id": strconv.Itoa(pr.Number), "sha": pr.HeadSHA}
			setNonEmpty(set, "branch", pr.HeadRef)
			setNonEmpty(set, "title", pr.Title)
			setNonEmpty(set, "author", pr.Author)
			if len(pr.Labels) > 0 {
				labels := make([]any, len(pr.Labels))
				for i, l := range pr.Labels {
					labels[i] = l
				}
				set["labels"] = labels
			}
			out = append(out, set)
			return len(out) < f.limit
		})
		return out, err
	case TypeGitHubBranch:
		err := g.Branches(ctx, owner, repo, func(b github.Ref) bool {
			if !f.matchString(b.Name) {
				return true
			}
			out = append(out, map[string]any{"id": inputID(b.Name), "sha": b.SHA, "branch": b.Name})
			return len(out) < f.limit
		})
		return out, err
	default: // TypeGitHubTag
		var all []tagResult
		err := g.Tags(ctx, owner, repo, func(t github.Ref) bool {
			all = append(all, tagResult{name: t.Name, result: map[string]any{"id": inputID(t.Name), "sha": t.SHA, "tag": t.Name}})
			return true
		})
		if err != nil {
			return nil, err
		}
		for _, t := range f.tags(all) {
			out = append(out, t.result)
		}
		return out, nil
	}
}

func setNonEmpty(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

// repository is the owner and name of the repository rawURL names, which
// must be on the server at web (the run's GitHub client's).
func repository(rawURL, web string) (owner, repo string, err error) {
	if rawURL == "" {
		return "", "", errors.New("spec.url: required for a GitHub type")
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("spec.url %q: not an http(s) URL of a repository", rawURL)
	}
	w, err := url.Parse(web)
	if err != nil {
		return "", "", err
	}
	if !strings.EqualFold(u.Scheme, w.Scheme) || !strings.EqualFold(u.Host, w.Host) {
		return "", "", fmt.Errorf("spec.url %q is not on %s, the GitHub server this run's token is for: it is not sent elsewhere", rawURL, web)
	}
	parts := strings.Split(strings.TrimLeft(u.Path, "/"), "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("spec.url %q: no owner and repository in it", rawURL)
	}
	return parts[0], parts[1], nil
}
