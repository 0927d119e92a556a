package kmstest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Google, Azure and Vault doubles answer HTTPS on 127.0.0.1 under the
// real services' host names (cloudkms.googleapis.com,
// myvault.vault.azure.net, ...), with certificates from a test CA made
// once per process. Azure's SDK refuses to send a bearer token over plain
// HTTP and checks that a Key Vault's host matches its authentication
// challenge, so an endpoint override to http://127.0.0.1 cannot reach a
// fake; a client whose dialer sends each of those host names to the
// double that serves it, and that trusts the test CA, can, with the
// service's real URLs on the wire. Client builds one; a host no double
// serves fails at once, so nothing ever leaves the machine.

var (
	caOnce sync.Once
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte
)

func testCA() (*x509.Certificate, *ecdsa.PrivateKey) {
	caOnce.Do(func() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(1),
			Subject:               pkix.Name{CommonName: "kmstest CA"},
			NotBefore:             time.Now().Add(-time.Hour),
			NotAfter:              time.Now().Add(24 * time.Hour),
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
			BasicConstraintsValid: true,
			IsCA:                  true,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			panic(err)
		}
		caCert, err = x509.ParseCertificate(der)
		if err != nil {
			panic(err)
		}
		caKey = key
		caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	})
	return caCert, caKey
}

// CAPEM is the PEM certificate of the CA that signs every double's
// serving certificate.
func CAPEM() []byte {
	testCA()
	return caPEM
}

// serverCert makes a serving certificate for hosts (names, wildcards such
// as *.vault.azure.net, and 127.0.0.1).
func serverCert(hosts []string) tls.Certificate {
	ca, signer := testCA()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     hosts,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, signer)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// tlsServer is an HTTPS double serving hosts.
type tlsServer struct {
	srv   *httptest.Server
	hosts []string
}

// Close stops the double before the test ends: its hosts then refuse
// connections, as a server that is down does.
func (s *tlsServer) Close() { s.srv.Close() }

// newTLSServer starts h on 127.0.0.1 with a certificate for hosts and
// closes it when the test ends.
func newTLSServer(t testing.TB, h http.Handler, hosts ...string) *tlsServer {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert(hosts)}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &tlsServer{srv: srv, hosts: hosts}
}

// newPlainServer starts h on 127.0.0.1 over plain HTTP, as the clouds'
// link-local metadata endpoints answer, reached under hosts (an IP such
// as 169.254.169.254 or a name) by Client, and closes it when the test
// ends.
func newPlainServer(t testing.TB, h http.Handler, hosts ...string) *tlsServer {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &tlsServer{srv: srv, hosts: hosts}
}

// serves reports whether host (without port) is one of s's names.
func (s *tlsServer) serves(host string) bool {
	for _, h := range s.hosts {
		if h == host || (strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:]) && !strings.Contains(strings.TrimSuffix(host, h[1:]), ".")) {
			return true
		}
	}
	return false
}

// Double is a fake that serves HTTPS under real host names.
type Double interface {
	server() *tlsServer
}

// Client returns an HTTP client that reaches the doubles under their host
// names (any port; plain HTTP for the metadata doubles) and trusts the
// test CA. A host no double serves is an
// error: the client never reaches the network.
func Client(doubles ...Double) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(CAPEM())
	var servers []*tlsServer
	for _, d := range doubles {
		servers = append(servers, d.server())
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			for _, s := range servers {
				if s.serves(host) {
					return dialer.DialContext(ctx, network, s.srv.Listener.Addr().String())
				}
			}
			// As a name that does not resolve fails.
			return nil, &net.DNSError{Err: "no such host (kmstest: no double serves it)", Name: host, IsNotFound: true}
		},
		ForceAttemptHTTP2: true,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}
