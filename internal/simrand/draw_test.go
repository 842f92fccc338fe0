package simrand

import (
	"math"
	"testing"
)

// AboutMean's draws have the mean and the variance rho·mean·(1−mean) its
// callers assume, for shape parameters on both sides of 1 (Gamma's two
// branches); rho 0 is the mean itself.
func TestAboutMeanMoments(t *testing.T) {
	src := New(5, 6)
	for _, c := range []struct{ mean, rho float64 }{{0.8, 0.3}, {0.9, 0.05}, {0.5, 0.7}, {0.3, 0.1}} {
		const n = 200000
		var sum, sq float64
		for range n {
			x := AboutMean(src.Rand, c.mean, c.rho)
			if x < 0 || x > 1 {
				t.Fatalf("mean %v rho %v: draw %v outside [0, 1]", c.mean, c.rho, x)
			}
			sum += x
			sq += x * x
		}
		m := sum / n
		v := sq/n - m*m
		want := c.rho * c.mean * (1 - c.mean)
		// Five standard errors of the mean; the variance within 3%.
		if se := math.Sqrt(want / n); math.Abs(m-c.mean) > 5*se || math.Abs(v-want) > 0.03*want {
			t.Errorf("mean %v rho %v: drew mean %.5f variance %.5f, want %v and %.5f", c.mean, c.rho, m, v, c.mean, want)
		}
	}
	if got := AboutMean(src.Rand, 0.8, 0); got != 0.8 {
		t.Errorf("rho 0 drew %v", got)
	}
}
