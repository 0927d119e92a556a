package kmstest

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// ecrTarget starts the X-Amz-Target of ECR's (JSON 1.1) operations.
const ecrTarget = "AmazonEC2ContainerRegistry_V20150921."

// ecrAuthErrors are ECR's authentication errors.
var ecrAuthErrors = authErrors{http.StatusBadRequest, "MissingAuthenticationTokenException", "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException"}

// ECRToken is the registry password GetAuthorizationToken hands any
// authenticated caller (user AWS): a registry double checks it.
func (s *Server) ECRToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ecrToken == "" {
		s.ecrToken = "ecr-" + randomString("abcdefghijklmnopqrstuvwxyz0123456789", 40)
	}
	return s.ecrToken
}

// serveECR answers GetAuthorizationToken, SigV4-signed for service "ecr":
// base64 "AWS:<ECRToken>", as ECR gives it.
func (s *Server) serveECR(w http.ResponseWriter, r *http.Request, target string) {
	rec := Request{Target: "ECR." + target[len(ecrTarget):], AccessKeyID: accessKeyIDOf(r)}
	reply := func(status int, v any, errType string) {
		rec.Error = errType
		s.record(rec)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Header().Set("X-Amzn-RequestId", requestID())
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		reply(http.StatusBadRequest, map[string]string{"__type": "SerializationException", "message": err.Error()}, "SerializationException")
		return
	}
	p, aerr := s.authenticate(r, body, "ecr", ecrAuthErrors)
	if aerr != nil {
		reply(aerr.Status, map[string]string{"__type": aerr.Code, "message": aerr.Message}, aerr.Code)
		return
	}
	rec.Principal = p.arn
	if target != ecrTarget+"GetAuthorizationToken" {
		reply(http.StatusBadRequest, map[string]string{"__type": "UnknownOperationException", "message": target}, "UnknownOperationException")
		return
	}
	reply(http.StatusOK, map[string]any{"authorizationData": []map[string]any{{
		"authorizationToken": base64.StdEncoding.EncodeToString([]byte("AWS:" + s.ECRToken())),
		"expiresAt":          float64(time.Now().Add(12 * time.Hour).Unix()),
		"proxyEndpoint":      "https://" + AccountID + ".dkr.ecr." + Region + ".amazonaws.com",
	}}}, "")
}
