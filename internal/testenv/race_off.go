//go:build !race

package testenv

const raceBuild = ""
