package source

import "testing"

// A GitRepository is this repository when its URL names the checkout's
// remote or GitHub's repository, whatever the form of either.
func TestIdentityMatchesURLs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id   Identity
		url  string
		want bool
	}{
		{Identity{Remote: "https://github.com/acme/fleet"}, "ssh://git@github.com/acme/fleet", true},
		{Identity{Remote: "https://github.com/acme/fleet.git"}, "https://github.com/acme/fleet", true},
		{Identity{Remote: "git@github.com:acme/fleet.git"}, "https://github.com/acme/fleet/", true},
		{Identity{Remote: "https://x-access-token:s3cret@GitHub.com/Acme/Fleet"}, "ssh://git@github.com:22/acme/fleet.git", true},
		{Identity{Remote: "ssh://git@gitlab.example:2222/team/infra/fleet.git"}, "https://gitlab.example/team/infra/fleet", true},
		{Identity{Remote: "/srv/git/fleet.git"}, "file:///srv/git/fleet.git", true},
		{Identity{Remote: "/srv/git/fleet"}, "file:///srv/git/fleet.git", true},
		{Identity{GitHubRepository: "acme/fleet"}, "ssh://git@github.com/acme/fleet", true},
		{Identity{GitHubRepository: "acme/fleet", GitHubServer: "https://ghe.example/"}, "git@ghe.example:acme/fleet.git", true},
		{Identity{Remote: "https://github.com/me/fork", GitHubRepository: "acme/fleet"}, "https://github.com/acme/fleet", true},

		{Identity{Remote: "https://github.com/acme/fleet"}, "https://github.com/acme/fleet-infra", false},
		{Identity{Remote: "https://github.com/acme/fleet"}, "https://gitlab.com/acme/fleet", false},
		{Identity{Remote: "https://github.com/acme/fleet"}, "https://github.com/stefanprodan/gitops-istio", false},
		{Identity{GitHubRepository: "acme/fleet", GitHubServer: "https://ghe.example"}, "https://github.com/acme/fleet", false},
		{Identity{}, "https://github.com/acme/fleet", false},
		{Identity{Remote: "https://github.com/acme/fleet"}, "", false},
		{Identity{Remote: "https://github.com/acme/fleet"}, "not a url", false},
		{Identity{Remote: "https://github.com/"}, "https://github.com", false},
	} {
		if got := tc.id.Matches(tc.url); got != tc.want {
			t.Errorf("%+v matches %q: %v, want %v", tc.id, tc.url, got, tc.want)
		}
	}
}
