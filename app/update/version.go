package update

import (
	"fmt"
	"strings"

	"golang.org/x/mod/semver"
)

// Compare compares two versions by semantic-versioning precedence and
// returns -1, 0 or +1. A leading "v" is allowed; build metadata is ignored;
// 1.0.0-rc.1 < 1.0.0; numeric pre-release parts compare as numbers. An
// invalid version is an error wrapping ErrVersion.
func Compare(a, b string) (int, error) {
	va, err := parseVersion(a)
	if err != nil {
		return 0, err
	}
	vb, err := parseVersion(b)
	if err != nil {
		return 0, err
	}
	return semver.Compare(va, vb), nil
}

// parseVersion checks a Semantic Versioning 2.0.0 version, with or without
// a leading "v", and returns it in golang.org/x/mod/semver's form (with
// the "v"). Unlike semver, it takes no shorthand (v1, v1.2): a release
// names all three numbers.
func parseVersion(s string) (string, error) {
	v := s
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	noBuild, _, _ := strings.Cut(v, "+")
	core, _, _ := strings.Cut(noBuild, "-")
	if !semver.IsValid(v) || strings.Count(core, ".") != 2 {
		return "", fmt.Errorf("%w: %q: want MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]", ErrVersion, s)
	}
	return v, nil
}
