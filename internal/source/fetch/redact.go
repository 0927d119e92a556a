package fetch

import (
	"net/url"
	"strings"
)

// Redact is rawURL without its password or token, for messages: the one
// way a source's URL is shown (a URL may carry a token). A password is
// replaced; a user alone in an http(s) URL is taken for a token
// (https://TOKEN@host) and replaced too; an ssh user is kept.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	} else if strings.Contains(rawURL, "://") && u.Scheme != "ssh" {
		u.User = url.User("xxxxx") // https://TOKEN@host: the user is the token
	}
	return u.String()
}
