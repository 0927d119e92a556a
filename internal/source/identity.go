// Package source is the one room of Flux sources: which GitRepository is
// this repository, and (in its parts) how each source kind is fetched,
// read and bounded: gitsource (GitRepository), ocisource (OCIRepository,
// OCI charts), helmrepo (HelmRepository), fetch (the rules every fetch
// obeys). It imports nothing above it: units, helm and the front ends
// call it.
package source

import (
	"net/url"
	"path"
	"strings"
)

// Identity is what tells this repository (the checkout) apart from
// others, for a GitRepository's spec.url to be compared with.
type Identity struct {
	// Remote is the checkout's origin URL, without credentials
	// (checkout.Origin).
	Remote string
	// GitHubServer (GITHUB_SERVER_URL, "https://github.com" when empty)
	// and GitHubRepository (GITHUB_REPOSITORY, "owner/name"): the
	// repository a GitHub Actions run is for.
	GitHubServer, GitHubRepository string
}

// Known says whether id can tell any repository.
func (id Identity) Known() bool { return id.Remote != "" || id.GitHubRepository != "" }

// String names the identity in messages, without credentials.
func (id Identity) String() string {
	var names []string
	if id.Remote != "" {
		names = append(names, "remote origin "+id.Remote)
	}
	if id.GitHubRepository != "" {
		names = append(names, "GITHUB_REPOSITORY "+id.GitHubRepository)
	}
	if len(names) == 0 {
		return "no remote origin, no GITHUB_REPOSITORY"
	}
	return strings.Join(names, ", ")
}

// Matches says whether the Git URL u names this repository: the same
// host (any case, any port) and path (any case, without a trailing .git
// or /), whatever the form: https://, ssh://, git@host:path (scp-like),
// file:// or a local path. It is the one answer to "is this GitRepository
// this repository", for a Kustomization's source and a HelmRelease's
// chart alike.
func (id Identity) Matches(u string) bool {
	want, ok := repoKey(u)
	if !ok {
		return false
	}
	if key, ok := repoKey(id.Remote); ok && key == want {
		return true
	}
	if id.GitHubRepository != "" {
		server := id.GitHubServer
		if server == "" {
			server = "https://github.com"
		}
		if key, ok := repoKey(strings.TrimSuffix(server, "/") + "/" + id.GitHubRepository); ok && key == want {
			return true
		}
	}
	return false
}

// repoKey normalises a Git URL to "host/path", lower-cased: hosting
// services route paths without case, and a host's case never counts.
func repoKey(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", false
	}
	var host, p string
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			return "", false
		}
		if u.Scheme == "file" {
			host, p = "", u.Path
		} else {
			host, p = u.Hostname(), u.Path
		}
	case strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "."):
		p = raw // a local path, as git takes one
	default:
		// scp-like: [user@]host:path, the host without a slash before
		// the colon.
		before, after, ok := strings.Cut(raw, ":")
		if !ok || strings.Contains(before, "/") {
			return "", false
		}
		if i := strings.LastIndex(before, "@"); i >= 0 {
			before = before[i+1:]
		}
		host, p = before, after
	}
	if host == "" && !strings.HasPrefix(p, "/") {
		return "", false
	}
	p = strings.TrimSuffix(strings.Trim(path.Clean("/"+p), "/"), ".git")
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return "", false
	}
	return strings.ToLower(host) + "/" + strings.ToLower(p), true
}
