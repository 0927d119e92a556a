package kmstest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
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

	creds := aws.Credentials{AccessKeyID: auth.accessKeyID}
	p := &principal{accessKeyID: auth.accessKeyID}
	s.mu.Lock()
	secret, isUser := s.users[auth.accessKeyID]
	sess := s.sessions[auth.accessKeyID]
	s.mu.Unlock()
	switch {
	case isUser:
		creds.SecretAccessKey = secret
		p.arn = "arn:aws:iam::" + AccountID + ":user/" + auth.accessKeyID
	case sess != nil:
		if r.Header.Get("X-Amz-Security-Token") != sess.token {
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
