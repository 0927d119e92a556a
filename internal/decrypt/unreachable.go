package decrypt

import (
	"errors"
	"net"
	"net/url"
)

// isUnreachable reports whether err is a failure to reach a server
// (refused, reset, timed out, no such host) rather than its answer.
func isUnreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	var ue *url.Error
	return errors.As(err, &op) || errors.As(err, &dns) || (errors.As(err, &ue) && (ue.Timeout() || errors.Is(ue.Err, net.ErrClosed)))
}

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
	return err.Error()
}
