//go:build race

package testenv

// raceBuild is "-race" when the test binary was built with the race
// detector (see BuildFlags).
const raceBuild = "-race"
