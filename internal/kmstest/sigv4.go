package kmstest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// authErrors are the error codes a protocol returns for failed
// authentication.
type authErrors struct {
	status                                     int
	missing, unknownKey, badSignature, expired string
}

var (
	kmsAuthErrors = authErrors{http.StatusBadRequest, "MissingAuthenticationTokenException", "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException"}
	stsAuthErrors = authErrors{http.StatusForbidden, "MissingAuthenticationToken", "InvalidClientTokenId", "SignatureDoesNotMatch", "ExpiredToken"}
)

// maxSkew is how far the request's signing time may be from the server's
// clock, as AWS allows.
const maxSkew = 5 * time.Minute

// sigV4 is the parsed Authorization header.
type sigV4 struct {
	accessKeyID, date, region, service string
	signedHeaders                      []string
	signature                          string
}

// parseAuthorization parses
// "AWS4-HMAC-SHA256 Credential=AKID/20240101/region/service/aws4_request,
// SignedHeaders=a;b, Signature=hex".
func parseAuthorization(h string) (sigV4, bool) {
	var a sigV4
	rest, ok := strings.CutPrefix(h, "AWS4-HMAC-SHA256 ")
	if !ok {
		return a, false
	}
	for _, part := range strings.Split(rest, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch name {
		case "Credential":
			scope := strings.Split(value, "/")
			if len(scope) != 5 || scope[4] != "aws4_request" {
				return a, false
			}
			a.accessKeyID, a.date, a.region, a.service = scope[0], scope[1], scope[2], scope[3]
		case "SignedHeaders":
			a.signedHeaders = strings.Split(value, ";")
		case "Signature":
			a.signature = value
		}
	}
	return a, a.accessKeyID != "" && len(a.signedHeaders) > 0 && a.signature != ""
}

// accessKeyIDOf returns the access key id a request claims, for the record.
func accessKeyIDOf(r *http.Request) string {
	a, _ := parseAuthorization(r.Header.Get("Authorization"))
	return a.accessKeyID
}

// authenticate checks the request's SigV4 signature for service and
// returns the caller. The signature is verified in full: the server signs
// the request again, with the secret it holds for the access key, the
// headers the client says it signed and the body's hash, and compares.
func (s *Server) authenticate(r *http.Request, body []byte, service string, codes authErrors) (*principal, *apiError) {
	fail := func(code, msg string) (*principal, *apiError) {
		return nil, &apiError{Status: codes.status, Code: code, Message: msg}
	}
	header := r.Header.Get("Authorization")
	if header == "" {
		return fail(codes.missing, "Missing Authentication Token")
	}
	auth, ok := parseAuthorization(header)
	if !ok {
		return fail("IncompleteSignature", "Authorization header requires Credential, SignedHeaders and Signature.")
	}

	creds, p, aerr := s.credentials(auth.accessKeyID, r.Header.Get("X-Amz-Security-Token"), codes)
	if aerr != nil {
		return nil, aerr
	}

	if auth.service != service {
		return fail(codes.badSignature, "Credential should be scoped to correct service: '"+service+"'.")
	}
	signedAt, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || signedAt.Format("20060102") != auth.date {
		return fail(codes.badSignature, "X-Amz-Date is missing or does not match the credential scope.")
	}
	if d := time.Since(signedAt); d > maxSkew || d < -maxSkew {
		return fail(codes.badSignature, "Signature expired: the signing time is too far from the server's time.")
	}

	// Rebuild the request with only what the client signed, sign it and
	// compare signatures.
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	if err != nil {
		return fail(codes.badSignature, "cannot rebuild the request")
	}
	again.Host = r.Host
	for _, h := range auth.signedHeaders {
		switch h {
		case "host":
		case "content-length":
			again.ContentLength = int64(len(body))
		default:
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	err = v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), service, auth.region, signedAt)
	if err != nil {
		return fail(codes.badSignature, "cannot compute the signature")
	}
	want, _ := parseAuthorization(again.Header.Get("Authorization"))
	if strings.Join(want.signedHeaders, ";") != strings.Join(auth.signedHeaders, ";") ||
		!hmac.Equal([]byte(want.signature), []byte(auth.signature)) {
		return fail(codes.badSignature, "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
	}
	return p, nil
}

// credentials returns the secret (and session token) the server holds for
// accessKeyID, and who it is. A session's token must be the one sent.
func (s *Server) credentials(accessKeyID, sessionToken string, codes authErrors) (aws.Credentials, *principal, *apiError) {
	fail := func(code, msg string) (aws.Credentials, *principal, *apiError) {
		return aws.Credentials{}, nil, &apiError{Status: codes.status, Code: code, Message: msg}
	}
	creds := aws.Credentials{AccessKeyID: accessKeyID}
	p := &principal{accessKeyID: accessKeyID}
	s.mu.Lock()
	secret, isUser := s.users[accessKeyID]
	sess := s.sessions[accessKeyID]
	s.mu.Unlock()
	switch {
	case isUser:
		creds.SecretAccessKey = secret
		p.arn = "arn:aws:iam::" + AccountID + ":user/" + accessKeyID
	case sess != nil:
		if sessionToken != sess.token {
			return fail(codes.unknownKey, "The security token included in the request is invalid.")
		}
		if time.Now().After(sess.expires) {
			return fail(codes.expired, "The security token included in the request is expired")
		}
		creds.SecretAccessKey, creds.SessionToken = sess.secret, sess.token
		p.arn, p.roleARN = sess.arn, sess.roleARN
	default:
		return fail(codes.unknownKey, "The security token included in the request is invalid.")
	}
	return creds, p, nil
}

// emptyPayloadHash is the SHA-256 of nothing, what a presigned GET signs.
const emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// authenticatePresigned checks a presigned URL (SigV4 in the query string,
// as in an EKS token) for service and returns the caller. As for
// authenticate, the server signs the request again and compares: every
// signed header (x-k8s-aws-id among them) must be the one signed, and the
// URL must not have expired (X-Amz-Date + X-Amz-Expires).
func (s *Server) authenticatePresigned(r *http.Request, service string, codes authErrors) (*principal, *apiError) {
	fail := func(code, msg string) (*principal, *apiError) {
		return nil, &apiError{Status: codes.status, Code: code, Message: msg}
	}
	q := r.URL.Query()
	if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" || q.Get("X-Amz-Signature") == "" {
		return fail(codes.missing, "Missing Authentication Token")
	}
	scope := strings.Split(q.Get("X-Amz-Credential"), "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return fail("IncompleteSignature", "X-Amz-Credential is malformed.")
	}
	creds, p, aerr := s.credentials(scope[0], q.Get("X-Amz-Security-Token"), codes)
	if aerr != nil {
		return nil, aerr
	}
	if scope[3] != service {
		return fail(codes.badSignature, "Credential should be scoped to correct service: '"+service+"'.")
	}
	signedAt, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil || signedAt.Format("20060102") != scope[1] {
		return fail(codes.badSignature, "X-Amz-Date is missing or does not match the credential scope.")
	}
	expires, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || expires < 1 || expires > 604800 {
		return fail(codes.badSignature, "X-Amz-Expires must be 1 to 604800 seconds.")
	}
	if now := time.Now(); now.After(signedAt.Add(time.Duration(expires)*time.Second)) || signedAt.After(now.Add(maxSkew)) {
		return fail(codes.expired, "Request has expired")
	}

	signed := strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
	unsigned := url.Values{}
	for k, v := range q {
		if k != "X-Amz-Signature" {
			unsigned[k] = v
		}
	}
	for _, payloadHash := range []string{emptyPayloadHash, "UNSIGNED-PAYLOAD"} {
		again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.Path+"?"+unsigned.Encode(), nil)
		if err != nil {
			return fail(codes.badSignature, "cannot rebuild the request")
		}
		again.Host = r.Host
		for _, h := range signed {
			if h != "host" {
				again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
			}
		}
		uri, _, err := v4.NewSigner().PresignHTTP(context.Background(), creds, again, payloadHash, service, scope[2], signedAt)
		if err != nil {
			return fail(codes.badSignature, "cannot compute the signature")
		}
		want, err := url.Parse(uri)
		if err != nil {
			return fail(codes.badSignature, "cannot compute the signature")
		}
		if want.Query().Get("X-Amz-SignedHeaders") == q.Get("X-Amz-SignedHeaders") &&
			hmac.Equal([]byte(want.Query().Get("X-Amz-Signature")), []byte(q.Get("X-Amz-Signature"))) {
			return p, nil
		}
	}
	return fail(codes.badSignature, "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
}
