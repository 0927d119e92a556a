package gitsource

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	gitclient "github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
)

// CheckURL refuses a GitRepository's spec.url that is not fetched as
// Flux fetches one: http, https and ssh only. A file:// URL, an
// absolute or relative path would read any repository on the runner
// (other jobs' checkouts) and run the system's git-upload-pack; git://
// is unauthenticated and unencrypted.
func CheckURL(rawURL string) error {
	if strings.TrimSpace(rawURL) == "" {
		return fmt.Errorf("spec.url is empty")
	}
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return fmt.Errorf("spec.url is not a Git URL: %w", err)
	}
	switch ep.Protocol {
	case "http", "https", "ssh":
		return nil
	case "file":
		return fmt.Errorf("spec.url %q is a local path: only http, https and ssh repositories are fetched, as Flux fetches them (map a local checkout to the GitRepository instead)", rawURL)
	}
	return fmt.Errorf("spec.url: protocol %q is not fetched (http, https, ssh)", ep.Protocol)
}

var installed sync.Once

// installTransport makes go-git's HTTP transport, which it keeps per
// process, follow the sources' rules: no redirect from a public host to
// an internal address, credentials dropped on any change of origin, and
// no response larger than fetch.MaxResponseBytes (each request its own
// connection, counted). The file and git protocols are removed: nothing
// may reach them (see CheckURL).
func installTransport() {
	installed.Do(func() {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableKeepAlives = true
		dial := (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: -1}).DialContext
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &countedConn{Conn: c, left: fetch.MaxResponseBytes}, nil
		}
		c := githttp.NewClientWithOptions(&http.Client{Transport: tr, CheckRedirect: fetch.CheckRedirect}, &githttp.ClientOptions{RedirectPolicy: githttp.FollowInitialRedirects})
		gitclient.InstallProtocol("http", c)
		gitclient.InstallProtocol("https", c)
		gitclient.InstallProtocol("file", nil)
		gitclient.InstallProtocol("git", nil)
	})
}

// countedConn fails reads past the bytes it may still read.
type countedConn struct {
	net.Conn
	mu   sync.Mutex
	left int64
}

func (c *countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.left -= int64(n)
	over := c.left < 0
	c.mu.Unlock()
	if over {
		return n, fmt.Errorf("%w: the server sent more than %d bytes", fetch.ErrTooLarge, fetch.MaxResponseBytes)
	}
	return n, err
}
