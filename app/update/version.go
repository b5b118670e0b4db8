package update

import (
	"fmt"
	"strconv"
	"strings"
)

// version is a parsed Semantic Versioning 2.0.0 version. Build metadata
// (after "+") is checked and then ignored, as precedence ignores it.
// Written here rather than taken from golang.org/x/mod/semver: 60 lines
// against a new module for the server's go.mod, and x/mod insists on a "v".
type version struct {
	core [3]uint64
	pre  []string
}

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
	return va.compare(vb), nil
}

func parseVersion(s string) (version, error) {
	bad := func(why string) (version, error) {
		return version{}, fmt.Errorf("%w: %q: %s", ErrVersion, s, why)
	}
	rest := strings.TrimPrefix(s, "v")
	rest, build, hasBuild := strings.Cut(rest, "+")
	if hasBuild && !validIdents(build, false) {
		return bad("bad build metadata")
	}
	rest, pre, hasPre := strings.Cut(rest, "-")
	var v version
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return bad("want MAJOR.MINOR.PATCH")
	}
	for i, p := range parts {
		if !isNumeric(p) {
			return bad("not a number: " + p)
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return bad(err.Error())
		}
		v.core[i] = n
	}
	if hasPre {
		if !validIdents(pre, true) {
			return bad("bad pre-release")
		}
		v.pre = strings.Split(pre, ".")
	}
	return v, nil
}

// isNumeric reports a number without leading zeros ("0" is fine).
func isNumeric(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	return strings.Trim(s, "0123456789") == ""
}

// validIdents checks dot-separated identifiers of [0-9A-Za-z-]; in a
// pre-release a numeric identifier must not have leading zeros.
func validIdents(s string, pre bool) bool {
	for _, id := range strings.Split(s, ".") {
		if id == "" || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != "" {
			return false
		}
		if pre && strings.Trim(id, "0123456789") == "" && !isNumeric(id) {
			return false
		}
	}
	return true
}

func (a version) compare(b version) int {
	for i := range a.core {
		if a.core[i] != b.core[i] {
			return cmpUint(a.core[i], b.core[i])
		}
	}
	// A version without pre-release ranks above any with one.
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1
	case len(b.pre) == 0:
		return -1
	}
	for i := 0; i < len(a.pre) && i < len(b.pre); i++ {
		x, y := a.pre[i], b.pre[i]
		xn, yn := isNumeric(x), isNumeric(y)
		switch {
		case x == y:
			continue
		case xn && yn: // numbers compare numerically: by length, then digits
			if len(x) != len(y) {
				return cmpUint(uint64(len(x)), uint64(len(y)))
			}
			return strings.Compare(x, y)
		case xn: // numeric identifiers rank below alphanumeric ones
			return -1
		case yn:
			return 1
		default:
			return strings.Compare(x, y)
		}
	}
	return cmpUint(uint64(len(a.pre)), uint64(len(b.pre)))
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
