package kmstest

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const stsNamespace = "https://sts.amazonaws.com/doc/2011-06-15/"

var roleARNPattern = regexp.MustCompile(`^arn:aws:iam::[0-9]{12}:role/([\w+=,.@/-]+)$`)

type stsCredentials struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

type assumedRoleUser struct {
	Arn           string `xml:"Arn"`
	AssumedRoleID string `xml:"AssumedRoleId"`
}

type stsResult struct {
	XMLName                     xml.Name        // ActionResult
	Credentials                 stsCredentials  `xml:"Credentials"`
	AssumedRoleUser             assumedRoleUser `xml:"AssumedRoleUser"`
	SubjectFromWebIdentityToken string          `xml:"SubjectFromWebIdentityToken,omitempty"`
}

func stsErr(status int, code, msg string) *apiError {
	return &apiError{Status: status, Code: code, Message: msg}
}

func (s *Server) serveSTS(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	form, perr := url.ParseQuery(string(body))
	action := form.Get("Action")
	rec := Request{Target: "STS." + action, AccessKeyID: accessKeyIDOf(r), Key: form.Get("RoleArn")}

	var res *stsResult
	var aerr *apiError
	switch {
	case err != nil || perr != nil:
		aerr = stsErr(http.StatusBadRequest, "MalformedInput", "cannot read the form body")
	case form.Get("Version") != "2011-06-15":
		aerr = stsErr(http.StatusBadRequest, "InvalidAction", "unsupported version")
	case action == "AssumeRole":
		var p *principal
		p, aerr = s.authenticate(r, body, "sts", stsAuthErrors)
		if aerr == nil {
			rec.Principal = p.arn
			res, aerr = s.assumeRole(p, form)
		}
	case action == "GetCallerIdentity":
		p, aerr := s.authenticate(r, body, "sts", stsAuthErrors)
		s.writeCallerIdentity(w, r, rec, p, aerr)
		return
	case action == "AssumeRoleWithWebIdentity":
		// Unsigned by design: the OIDC token is the credential.
		res, aerr = s.assumeRoleWithWebIdentity(form)
	default:
		aerr = stsErr(http.StatusBadRequest, "InvalidAction", "Could not find operation "+action)
	}

	w.Header().Set("Content-Type", "text/xml")
	reqID := requestID()
	w.Header().Set("X-Amzn-RequestId", reqID)
	if aerr != nil {
		rec.Error = aerr.Code
		s.record(rec)
		w.WriteHeader(aerr.Status)
		_ = xml.NewEncoder(w).Encode(stsErrorResponse{
			XMLNS:     stsNamespace,
			Error:     stsError{Type: "Sender", Code: aerr.Code, Message: aerr.Message},
			RequestID: reqID,
		})
		return
	}
	s.record(rec)
	res.XMLName = xml.Name{Local: action + "Result"}
	_ = xml.NewEncoder(w).Encode(stsResponse{
		XMLName:  xml.Name{Local: action + "Response"},
		XMLNS:    stsNamespace,
		Result:   res,
		Metadata: stsMetadata{RequestID: reqID},
	})
}

type stsResponse struct {
	XMLName  xml.Name
	XMLNS    string      `xml:"xmlns,attr"`
	Result   *stsResult  // named by its XMLName
	Metadata stsMetadata `xml:"ResponseMetadata"`
}

type stsMetadata struct {
	RequestID string `xml:"RequestId"`
}

type stsErrorResponse struct {
	XMLName   xml.Name `xml:"ErrorResponse"`
	XMLNS     string   `xml:"xmlns,attr"`
	Error     stsError `xml:"Error"`
	RequestID string   `xml:"RequestId"`
}

type stsError struct {
	Type    string `xml:"Type"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

func (s *Server) assumeRole(p *principal, form url.Values) (*stsResult, *apiError) {
	roleARN := form.Get("RoleArn")
	s.mu.Lock()
	trusted := s.trust[roleARN]
	s.mu.Unlock()
	if trusted != nil && !trusted[p.accessKeyID] {
		return nil, stsErr(http.StatusForbidden, "AccessDenied",
			"User: "+p.arn+" is not authorized to perform: sts:AssumeRole on resource: "+roleARN)
	}
	return s.issue(roleARN, form.Get("RoleSessionName"), form.Get("DurationSeconds"), "")
}

func (s *Server) assumeRoleWithWebIdentity(form url.Values) (*stsResult, *apiError) {
	roleARN, token := form.Get("RoleArn"), form.Get("WebIdentityToken")
	if token == "" {
		return nil, stsErr(http.StatusBadRequest, "InvalidIdentityToken", "The web identity token is empty")
	}
	s.mu.Lock()
	ok := s.webTokens[roleARN][token]
	s.mu.Unlock()
	if !ok {
		// What AWS says when the role's trust policy does not match the
		// token's claims (the SDK would retry InvalidIdentityToken).
		return nil, stsErr(http.StatusForbidden, "AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity")
	}
	return s.issue(roleARN, form.Get("RoleSessionName"), form.Get("DurationSeconds"), "repo:example/app:ref:refs/heads/main")
}

// issue creates a session of roleARN with temporary credentials.
func (s *Server) issue(roleARN, name, duration, subject string) (*stsResult, *apiError) {
	m := roleARNPattern.FindStringSubmatch(roleARN)
	if m == nil {
		return nil, stsErr(http.StatusBadRequest, "ValidationError", "RoleArn is not a valid role ARN")
	}
	if name == "" || len(name) > 64 {
		return nil, stsErr(http.StatusBadRequest, "ValidationError", "RoleSessionName must be 1 to 64 characters")
	}
	ttl := time.Hour
	if duration != "" {
		secs, err := strconv.Atoi(duration)
		if err != nil || secs < 900 || secs > 43200 {
			return nil, stsErr(http.StatusBadRequest, "ValidationError", "DurationSeconds must be 900 to 43200")
		}
		ttl = time.Duration(secs) * time.Second
	}
	roleName := m[1][strings.LastIndex(m[1], "/")+1:]
	sess := &session{
		secret:  randomString("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 40),
		token:   randomString("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 120),
		roleARN: roleARN,
		arn:     "arn:aws:sts::" + AccountID + ":assumed-role/" + roleName + "/" + name,
		expires: time.Now().Add(ttl).UTC().Truncate(time.Second),
	}
	id := "ASIA" + randomString("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	s.mu.Lock()
	s.sessions[id] = sess
	s.mu.Unlock()
	return &stsResult{
		Credentials: stsCredentials{
			AccessKeyID:     id,
			SecretAccessKey: sess.secret,
			SessionToken:    sess.token,
			Expiration:      sess.expires.Format(time.RFC3339),
		},
		AssumedRoleUser:             assumedRoleUser{Arn: sess.arn, AssumedRoleID: "AROA" + randomString("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 17) + ":" + name},
		SubjectFromWebIdentityToken: subject,
	}, nil
}
