package simrand

import (
	"math"
	"math/rand/v2"
)

// AboutMean draws a unit's own rate about mean with intra-class
// correlation rho: Beta(mean·(1−rho)/rho, (1−mean)·(1−rho)/rho), whose
// mean is mean and whose variance is rho·mean·(1−mean). rho 0 (or a mean
// of 0 or 1) is the mean itself. The verdict's simulated power and the
// calibration's worlds draw units so: the same rule, the same draws.
func AboutMean(rng *rand.Rand, mean, rho float64) float64 {
	if rho <= 0 || mean <= 0 || mean >= 1 {
		return mean
	}
	return Beta(rng, mean*(1-rho)/rho, (1-mean)*(1-rho)/rho)
}

// Beta draws from Beta(a, b), as the ratio of two Gamma draws.
func Beta(rng *rand.Rand, a, b float64) float64 {
	x, y := Gamma(rng, a), Gamma(rng, b)
	return x / (x + y)
}

// Gamma draws from Gamma(k, 1) (Marsaglia and Tsang).
func Gamma(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		return Gamma(rng, k+1) * math.Pow(rng.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		// Marsaglia and Tsang's squeeze: u below it passes the test
		// below, which then need not take two logarithms. It is held a
		// hair (1e-9) inside, far beyond the rounding of either side, so
		// that it accepts only what the test accepts: the same draws.
		if x2 := x * x; d < 1e5 && u < (1-0.0331*x2*x2)*(1-1e-9) {
			return d * v
		}
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
