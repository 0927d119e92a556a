package mask

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// HashLen is how many hex digits of a Hash are shown: enough to tell a
// changed value at a glance, never the value.
const HashLen = 8

var (
	hashMu  sync.RWMutex
	hashKey = newHashKey()
)

// newHashKey draws the key hashes are made with: drawn once per process,
// held nowhere else, so a hash says nothing outside the run that showed
// it, and a short value cannot be found by hashing guesses.
func newHashKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (Go 1.24+)
	return k
}

// Hash is a short keyed digest of a secret value, shown in place of it
// where a diff must say that it changed: HMAC-SHA256 under a key drawn
// for this process, its first HashLen hex digits. Equal values have equal
// hashes within one run; the hashes of two runs (two PR comments, a
// comment and a log) never compare.
func Hash(value []byte) string {
	hashMu.RLock()
	defer hashMu.RUnlock()
	return hashWith(hashKey, value)
}

// hashWith is Hash under key.
func hashWith(key, value []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(value)
	return hex.EncodeToString(m.Sum(nil))[:HashLen]
}

// SetHashKey replaces the key of Hash, for tests whose golden output
// holds hashes; product code never calls it (the key must stay random).
func SetHashKey(key []byte) {
	hashMu.Lock()
	defer hashMu.Unlock()
	hashKey = append([]byte(nil), key...)
}
