// Package simrand holds the random numbers of the simulations (the
// verdict's simulated power, the calibration's grids): a PCG generator,
// and for the uniforms drawn by the million the very numbers
// rand.Rand.Float64 gives, without its indirect call.
package simrand

import "math/rand/v2"

// Source is a simulation's random numbers: Rand, and its generator PCG,
// from which Unit(src.PCG.Uint64()) draws the uniforms (the compiler
// inlines that whole, where a method wrapping it would be too large to
// inline).
type Source struct {
	PCG  *rand.PCG
	Rand *rand.Rand
}

// New seeds a Source.
func New(seed1, seed2 uint64) Source {
	pcg := rand.NewPCG(seed1, seed2)
	return Source{PCG: pcg, Rand: rand.New(pcg)}
}

// Unit is rand.Rand.Float64's uniform in [0, 1) from the generator's
// next number.
func Unit(x uint64) float64 { return float64(x<<11>>11) / (1 << 53) }
