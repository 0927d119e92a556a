package kmstest

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"
)

// eksAuthErrors are EKS's (REST-JSON) authentication errors.
var eksAuthErrors = authErrors{http.StatusForbidden, "MissingAuthenticationTokenException", "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException"}

// eksCluster is an EKS cluster DescribeCluster knows.
type eksCluster struct {
	endpoint string
	caPEM    []byte
}

// AddCluster registers an EKS cluster: DescribeCluster of name answers
// endpoint and the PEM CA certificate, to any authenticated caller.
func (s *Server) AddCluster(name, endpoint string, caPEM []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clusters[name] = eksCluster{endpoint: endpoint, caPEM: caPEM}
}

// serveEKS answers DescribeCluster: GET /clusters/{name}, SigV4-signed
// for service "eks".
func (s *Server) serveEKS(w http.ResponseWriter, r *http.Request) {
	name, _ := url.PathUnescape(strings.TrimPrefix(r.URL.Path, "/clusters/"))
	rec := Request{Target: "EKS.DescribeCluster", AccessKeyID: accessKeyIDOf(r), Key: name}
	reply := func(status int, v any, errType string) {
		rec.Error = errType
		s.record(rec)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-RequestId", requestID())
		if errType != "" {
			w.Header().Set("X-Amzn-ErrorType", errType)
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	p, aerr := s.authenticate(r, nil, "eks", eksAuthErrors)
	if aerr != nil {
		reply(aerr.Status, map[string]string{"message": aerr.Message}, aerr.Code)
		return
	}
	rec.Principal = p.arn
	s.mu.Lock()
	c, ok := s.clusters[name]
	s.mu.Unlock()
	if !ok {
		reply(http.StatusNotFound, map[string]string{"message": "No cluster found for name: " + name + "."}, "ResourceNotFoundException")
		return
	}
	reply(http.StatusOK, map[string]any{"cluster": map[string]any{
		"name":                 name,
		"arn":                  "arn:aws:eks:" + Region + ":" + AccountID + ":cluster/" + name,
		"endpoint":             c.endpoint,
		"status":               "ACTIVE",
		"version":              "1.37",
		"certificateAuthority": map[string]string{"data": base64.StdEncoding.EncodeToString(c.caPEM)},
	}}, "")
}

type callerIdentity struct {
	Account string `xml:"Account" json:"Account"`
	Arn     string `xml:"Arn" json:"Arn"`
	UserID  string `xml:"UserId" json:"UserId"`
}

// servePresignedSTS answers a presigned GET of STS GetCallerIdentity: the
// request an EKS token is, as the cluster's authenticator sends it (with
// the x-k8s-aws-id header and, usually, Accept: application/json).
func (s *Server) servePresignedSTS(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	rec := Request{Target: "STS." + q.Get("Action"), Key: r.Header.Get("X-K8s-Aws-Id")}
	if cred := strings.Split(q.Get("X-Amz-Credential"), "/"); len(cred) > 0 {
		rec.AccessKeyID = cred[0]
	}
	var aerr *apiError
	var p *principal
	switch {
	case q.Get("Action") != "GetCallerIdentity" || q.Get("Version") != "2011-06-15":
		aerr = stsErr(http.StatusBadRequest, "InvalidAction", "only GetCallerIdentity may be presigned here")
	default:
		p, aerr = s.authenticatePresigned(r, "sts", stsAuthErrors)
	}
	s.writeCallerIdentity(w, r, rec, p, aerr)
}

// writeCallerIdentity answers GetCallerIdentity for p, or with aerr, in
// JSON when the caller accepts it (the EKS authenticator does), else XML.
func (s *Server) writeCallerIdentity(w http.ResponseWriter, r *http.Request, rec Request, p *principal, aerr *apiError) {
	reqID := requestID()
	w.Header().Set("X-Amzn-RequestId", reqID)
	jsonWanted := strings.Contains(r.Header.Get("Accept"), "application/json")
	if aerr != nil {
		rec.Error = aerr.Code
		s.record(rec)
		if jsonWanted {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(aerr.Status)
			_ = json.NewEncoder(w).Encode(map[string]any{"Error": map[string]string{"Code": aerr.Code, "Message": aerr.Message, "Type": "Sender"}, "RequestId": reqID})
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(aerr.Status)
		_ = xml.NewEncoder(w).Encode(stsErrorResponse{XMLNS: stsNamespace, Error: stsError{Type: "Sender", Code: aerr.Code, Message: aerr.Message}, RequestID: reqID})
		return
	}
	rec.Principal = p.arn
	s.record(rec)
	id := callerIdentity{Account: AccountID, Arn: p.arn, UserID: p.accessKeyID}
	if jsonWanted {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"GetCallerIdentityResponse": map[string]any{
			"GetCallerIdentityResult": id,
			"ResponseMetadata":        map[string]string{"RequestId": reqID},
		}})
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	_ = xml.NewEncoder(w).Encode(struct {
		XMLName  xml.Name       `xml:"GetCallerIdentityResponse"`
		XMLNS    string         `xml:"xmlns,attr"`
		Result   callerIdentity `xml:"GetCallerIdentityResult"`
		Metadata stsMetadata    `xml:"ResponseMetadata"`
	}{XMLNS: stsNamespace, Result: id, Metadata: stsMetadata{RequestID: reqID}})
}
