package helm

import "testing"

// LowerMaxRenderedBytes lowers the render limit to n for t: a test of
// the limit need not render 16 MiB.
func LowerMaxRenderedBytes(t testing.TB, n int) {
	old := maxRenderedBytes
	maxRenderedBytes = n
	t.Cleanup(func() { maxRenderedBytes = old })
}
