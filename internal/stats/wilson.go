package stats

import (
	"fmt"
	"math"
)

// Z95 is the two-sided 95% standard normal quantile, Φ⁻¹(0.975).
const Z95 = 1.959963984540054

// Wilson returns the Wilson score interval for k successes in n trials with
// normal quantile z (Z95 for 95%). It is used instead of the normal (Wald)
// interval because it stays inside [0, 1] and does not collapse to a point
// at k = 0 or k = n, which is exactly where small runs live (2/2, 0/2).
//
// n == 0 gives (0, 1): no data, no information. It panics if k < 0, n < 0
// or k > n, which are caller bugs, not data.
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n < 0 || k < 0 || k > n {
		panic(fmt.Sprintf("stats.Wilson: invalid counts k=%d n=%d", k, n))
	}
	if n == 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z / denom * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = center-half, center+half
	// At k = 0 and k = n the exact bounds are 0 and 1; rounding could
	// leave them a hair off, so pin them (and clamp in general).
	if k == 0 || lo < 0 {
		lo = 0
	}
	if k == n || hi > 1 {
		hi = 1
	}
	return lo, hi
}
