package kmstest

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
)

// key is a symmetric KMS key.
type key struct {
	id, arn string
	aead    cipher.AEAD // AES-256-GCM with the key's master key
	users   map[string]bool
	roles   map[string]bool
}

func newKey(id string) *key {
	master := make([]byte, 32)
	_, _ = rand.Read(master)
	block, err := aes.NewCipher(master)
	if err != nil {
		panic(err) // 32 bytes is always a valid AES key
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return &key{
		id:    id,
		arn:   "arn:aws:kms:" + Region + ":" + AccountID + ":key/" + id,
		aead:  aead,
		users: map[string]bool{},
		roles: map[string]bool{},
	}
}

// allows reports whether p may use k.
func (k *key) allows(p *principal) bool {
	return k.users[p.accessKeyID] || (p.roleARN != "" && k.roles[p.roleARN])
}

// The ciphertext blob is: version byte, key id length, key id, GCM nonce,
// sealed plaintext. Like a real KMS blob it names its key, so Decrypt needs
// no KeyId.
const blobVersion = 1

func (k *key) seal(plaintext []byte, encCtx map[string]string) []byte {
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce)
	blob := []byte{blobVersion, byte(len(k.id))}
	blob = append(blob, k.id...)
	blob = append(blob, nonce...)
	return k.aead.Seal(blob, nonce, plaintext, aad(k.arn, encCtx))
}

// open decrypts blob; a wrong encryption context fails GCM authentication.
func (k *key) open(blob []byte, encCtx map[string]string) ([]byte, error) {
	_, rest, err := splitBlob(blob)
	if err != nil {
		return nil, err
	}
	n := k.aead.NonceSize()
	if len(rest) < n+k.aead.Overhead() {
		return nil, errors.New("ciphertext too short")
	}
	return k.aead.Open(nil, rest[:n], rest[n:], aad(k.arn, encCtx))
}

// splitBlob returns the key id a blob names and the rest.
func splitBlob(blob []byte) (string, []byte, error) {
	if len(blob) < 2 || blob[0] != blobVersion || len(blob) < 2+int(blob[1]) {
		return "", nil, errors.New("not a ciphertext blob")
	}
	n := int(blob[1])
	return string(blob[2 : 2+n]), blob[2+n:], nil
}

// aad binds the key and the encryption context to the ciphertext. The
// context is encoded in key order so any map with the same pairs matches.
func aad(arn string, encCtx map[string]string) []byte {
	names := make([]string, 0, len(encCtx))
	for n := range encCtx {
		names = append(names, n)
	}
	sort.Strings(names)
	pairs := make([][2]string, 0, len(names))
	for _, n := range names {
		pairs = append(pairs, [2]string{n, encCtx[n]})
	}
	b, _ := json.Marshal(struct {
		Key     string
		Context [][2]string
	}{arn, pairs})
	return b
}

// kmsRequest holds the fields of every operation served; []byte fields are
// base64 in JSON, as KMS's blobs are.
type kmsRequest struct {
	KeyID             string            `json:"KeyId"`
	Plaintext         []byte            `json:"Plaintext"`
	CiphertextBlob    []byte            `json:"CiphertextBlob"`
	EncryptionContext map[string]string `json:"EncryptionContext"`
	KeySpec           string            `json:"KeySpec"`
	NumberOfBytes     int               `json:"NumberOfBytes"`
}

// apiError is an AWS error: Code is the error type the SDK matches on.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func kmsErr(code, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: code, Message: fmt.Sprintf(format, args...)}
}

func (s *Server) serveKMS(w http.ResponseWriter, r *http.Request, target string) {
	rec := Request{Target: target}
	resp, aerr := s.kms(r, target, &rec)
	if aerr != nil {
		rec.Error = aerr.Code
	}
	s.record(rec)

	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-RequestId", requestID())
	if aerr != nil {
		w.WriteHeader(aerr.Status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": aerr.Code, "message": aerr.Message})
		return
	}
	_ = json.NewEncoder(w).Encode(resp)
}

func (s *Server) kms(r *http.Request, target string, rec *Request) (any, *apiError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, kmsErr("SerializationException", "reading body: %v", err)
	}
	rec.AccessKeyID = accessKeyIDOf(r)
	p, aerr := s.authenticate(r, body, "kms", kmsAuthErrors)
	if aerr != nil {
		return nil, aerr
	}
	rec.Principal = p.arn
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		return nil, kmsErr("SerializationException", "unexpected content type %q", ct)
	}
	var req kmsRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return nil, kmsErr("SerializationException", "malformed request body")
	}

	switch target {
	case "TrentService.Encrypt":
		k, aerr := s.authorize(p, req.KeyID, "kms:Encrypt", rec)
		if aerr != nil {
			return nil, aerr
		}
		if len(req.Plaintext) == 0 || len(req.Plaintext) > 4096 {
			return nil, kmsErr("ValidationException", "Plaintext must be 1 to 4096 bytes")
		}
		return map[string]any{
			"CiphertextBlob":      k.seal(req.Plaintext, req.EncryptionContext),
			"KeyId":               k.arn,
			"EncryptionAlgorithm": "SYMMETRIC_DEFAULT",
		}, nil

	case "TrentService.GenerateDataKey":
		k, aerr := s.authorize(p, req.KeyID, "kms:GenerateDataKey", rec)
		if aerr != nil {
			return nil, aerr
		}
		n := req.NumberOfBytes
		switch req.KeySpec {
		case "AES_256":
			n = 32
		case "AES_128":
			n = 16
		case "":
		default:
			return nil, kmsErr("ValidationException", "unknown KeySpec %q", req.KeySpec)
		}
		if n < 1 || n > 1024 {
			return nil, kmsErr("ValidationException", "specify KeySpec or NumberOfBytes (1 to 1024)")
		}
		plain := make([]byte, n)
		_, _ = rand.Read(plain)
		return map[string]any{
			"CiphertextBlob": k.seal(plain, req.EncryptionContext),
			"Plaintext":      plain,
			"KeyId":          k.arn,
		}, nil

	case "TrentService.Decrypt":
		blobKeyID, _, err := splitBlob(req.CiphertextBlob)
		if err != nil {
			return nil, kmsErr("InvalidCiphertextException", "")
		}
		// The blob names its key; a KeyId in the request must agree.
		if req.KeyID != "" {
			s.mu.Lock()
			named := s.lookupKeyLocked(req.KeyID)
			s.mu.Unlock()
			if named == nil {
				rec.Key = req.KeyID
				return nil, kmsErr("NotFoundException", "Key '%s' does not exist", req.KeyID)
			}
			if named.id != blobKeyID {
				rec.Key = named.arn
				return nil, kmsErr("IncorrectKeyException", "The key ID in the request does not identify a CMK that can perform this operation.")
			}
		}
		k, aerr := s.authorize(p, blobKeyID, "kms:Decrypt", rec)
		if aerr != nil {
			return nil, aerr
		}
		plain, err := k.open(req.CiphertextBlob, req.EncryptionContext)
		if err != nil {
			// Real KMS says no more, whether the context or the blob is wrong.
			return nil, kmsErr("InvalidCiphertextException", "")
		}
		return map[string]any{
			"KeyId":               k.arn,
			"Plaintext":           plain,
			"EncryptionAlgorithm": "SYMMETRIC_DEFAULT",
		}, nil
	}
	return nil, kmsErr("UnknownOperationException", "")
}

// authorize resolves keyID and checks that p may use it for action.
func (s *Server) authorize(p *principal, keyID, action string, rec *Request) (*key, *apiError) {
	if keyID == "" {
		return nil, kmsErr("ValidationException", "KeyId is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.lookupKeyLocked(keyID)
	if k == nil {
		rec.Key = keyID
		if len(keyID) == 36 { // a bare key id, from a blob
			keyID = "arn:aws:kms:" + Region + ":" + AccountID + ":key/" + keyID
		}
		return nil, kmsErr("NotFoundException", "Key '%s' does not exist", keyID)
	}
	rec.Key = k.arn
	if !k.allows(p) {
		return nil, kmsErr("AccessDeniedException",
			"User: %s is not authorized to perform: %s on resource: %s because no resource-based policy allows the %s action",
			p.arn, action, k.arn, action)
	}
	return k, nil
}
