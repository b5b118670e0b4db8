//go:build !cgo

package testenv

// cgoEnabled: this test binary was built with cgo (see NeedBinaries).
const cgoEnabled = false
