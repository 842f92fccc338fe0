package simrand

import (
	"math/rand/v2"
	"testing"
)

// Unit(PCG.Uint64()) must draw the numbers rand.Rand.Float64 draws from
// the same seed: the calibration's figures were measured with those.
func TestUnitIsFloat64(t *testing.T) {
	src, ref := New(3, 4), rand.New(rand.NewPCG(3, 4))
	for i := range 100000 {
		if got, want := Unit(src.PCG.Uint64()), ref.Float64(); got != want {
			t.Fatalf("draw %d: %v, rand.Float64 gives %v", i, got, want)
		}
	}
}
