package decrypt

import (
	"errors"
	"net"
	"net/url"
	"regexp"
)

// isUnreachable reports whether err is a failure to reach a server
// (refused, reset, timed out, no such host) rather than its answer. Some
// clients (Google's credential code) flatten the network error into
// text, so its words are looked for too.
func isUnreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	var ue *url.Error
	if errors.As(err, &op) || errors.As(err, &dns) || (errors.As(err, &ue) && (ue.Timeout() || errors.Is(ue.Err, net.ErrClosed))) {
		return true
	}
	return networkFailure.MatchString(err.Error())
}

// networkFailure finds a network error in a flattened message.
var networkFailure = regexp.MustCompile(`(dial tcp|lookup) [^ ]+: .*(connection refused|no such host|i/o timeout|connection reset|network is unreachable).*$`)

// cause is the innermost network error's message: "dial tcp
// 127.0.0.1:8200: connect: connection refused".
func cause(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Error()
	}
	if m := networkFailure.FindString(err.Error()); m != "" {
		return m
	}
	return err.Error()
}
