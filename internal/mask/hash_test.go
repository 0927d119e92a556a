package mask

import (
	"regexp"
	"testing"
)

// A hash tells equal values apart from different ones within a run, in
// HashLen hex digits, and depends on the run's key: the same value hashes
// otherwise under another key, so hashes of two runs never compare and a
// value cannot be found by hashing guesses without the key.
func TestHashIsShortKeyedAndStable(t *testing.T) {
	t.Parallel()
	a, again, b := Hash([]byte("5432")), Hash([]byte("5432")), Hash([]byte("5433"))
	if a != again || a == b || !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(a) {
		t.Errorf("hashes %q %q %q", a, again, b)
	}
	one := hashWith([]byte("one key"), []byte("5432"))
	if hashWith([]byte("one key"), []byte("5432")) != one || hashWith([]byte("another key"), []byte("5432")) == one {
		t.Error("the hash does not depend on the key alone")
	}
	if k1, k2 := newHashKey(), newHashKey(); string(k1) == string(k2) || len(k1) != 32 {
		t.Error("keys are not random")
	}
}
