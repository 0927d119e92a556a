package gitsource

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/memfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"
	"golang.org/x/crypto/ssh"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
)

// A branch is fetched at depth 1: the commit, not its history.
func TestFetchIsShallow(t *testing.T) {
	srv := gittest.NewServer(t)
	r := srv.Repo("r")
	first := r.Commit("one", map[string]string{"a.yaml": "a: 1\n"})
	second := r.Commit("two", map[string]string{"a.yaml": "a: 2\n"})
	for _, tc := range []struct {
		s       strategy
		shallow bool
	}{
		{strategy{kind: "branch", ref: "refs/heads/master"}, true},
		{strategy{kind: "commit", ref: "refs/heads/master", want: second}, false}, // the commit may be anywhere in the branch's history
	} {
		store := memory.NewStorage()
		repo, err := git.Init(store, memfs.New())
		if err != nil {
			t.Fatal(err)
		}
		remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.URL}})
		if err != nil {
			t.Fatal(err)
		}
		_, h, err := fetcher{repo: repo, remote: remote}.fetch(context.Background(), tc.s)
		if err != nil || h.String() != second {
			t.Fatalf("%s: %s, %v; want %s", tc.s.kind, h, err, second)
		}
		shallow, _ := store.Shallow()
		_, err = repo.CommitObject(plumbing.NewHash(first))
		if got := len(shallow) > 0 && err != nil; got != tc.shallow {
			t.Errorf("%s: shallow %v (shallow commits %v, parent: %v), want %v", tc.s.kind, got, shallow, err, tc.shallow)
		}
	}
}

// SSH takes the Secret's identity, checked against its known_hosts; a
// URL's user is the SSH user (git by default). Without both, refused.
func TestSSHAuth(t *testing.T) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err := ssh.NewPublicKey(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	identity := pem.EncodeToMemory(block)
	knownHosts := []byte("git.example " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(hostKey))) + "\n")

	m, err := (&Auth{Identity: identity, KnownHosts: knownHosts}).method("ssh://deploy@git.example/acme/fleet.git", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	keys, ok := m.(*gitssh.PublicKeys)
	if !ok || keys.User != "deploy" || keys.HostKeyCallback == nil {
		t.Fatalf("got %#v", m)
	}
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 22}
	if err := keys.HostKeyCallback("git.example:22", addr, hostKey); err != nil {
		t.Errorf("the known host is refused: %v", err)
	}
	if err := keys.HostKeyCallback("other.example:22", addr, hostKey); err == nil {
		t.Error("a host not in known_hosts is accepted")
	}
	if m, err := (&Auth{Identity: identity, KnownHosts: knownHosts}).method("git@git.example:acme/fleet.git", t.TempDir()); err != nil || m.(*gitssh.PublicKeys).User != "git" {
		t.Errorf("scp-like URL: %v, %v", m, err)
	}
	for _, a := range []*Auth{nil, {Identity: identity}, {KnownHosts: knownHosts}} {
		if _, err := a.method("ssh://git@git.example/acme/fleet.git", t.TempDir()); err == nil || !strings.Contains(err.Error(), "identity and known_hosts") {
			t.Errorf("%+v: %v, want a refusal naming identity and known_hosts", a, err)
		}
	}
	if _, err := (&Auth{Identity: []byte("not a key"), KnownHosts: knownHosts}).method("ssh://git@git.example/r", t.TempDir()); err == nil || strings.Contains(err.Error(), "not a key") {
		t.Errorf("a bad identity: %v", err)
	}
}

// Credentials go over plain HTTP only to this machine.
func TestNoCredentialsInTheClear(t *testing.T) {
	a := &Auth{Username: "git", Password: "tok"}
	if _, err := a.method("http://git.example/acme/fleet", t.TempDir()); err == nil || !strings.Contains(err.Error(), "never sent in the clear") {
		t.Errorf("http:// to another host: %v", err)
	}
	for _, u := range []string{"https://git.example/acme/fleet", "http://127.0.0.1:8080/fleet", "http://localhost/fleet", "http://[::1]:80/fleet"} {
		if m, err := a.method(u, t.TempDir()); err != nil || m == nil {
			t.Errorf("%s: %v, %v", u, m, err)
		}
	}
	if m, err := (*Auth)(nil).method("http://git.example/acme/fleet", t.TempDir()); err != nil || m != nil {
		t.Errorf("no credentials over http://: %v, %v", m, err)
	}
}
