package update

import (
	"cmp"
	"errors"
	"testing"
)

// TestCompareOrder walks semver.org's precedence example, and more, in
// order: each version must rank below every later one.
func TestCompareOrder(t *testing.T) {
	order := []string{
		"0.0.0-dev",
		"0.9.9",
		"1.0.0-alpha",
		"1.0.0-alpha.1",
		"1.0.0-alpha.beta",
		"1.0.0-beta",
		"1.0.0-beta.2",
		"1.0.0-beta.11",
		"1.0.0-rc.1",
		"1.0.0",
		"1.0.1",
		"1.2.0",
		"1.10.0",
		"2.0.0",
	}
	for i, a := range order {
		for j, b := range order {
			got, err := Compare(a, b)
			if err != nil {
				t.Fatal(err)
			}
			want := cmp.Compare(i, j)
			if got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestCompareEqual(t *testing.T) {
	for _, tc := range []struct{ name, a, b string }{
		{"v prefix", "v1.2.3", "1.2.3"},
		{"both v", "v1.2.3-rc.1", "v1.2.3-rc.1"},
		{"build metadata ignored", "1.2.3+linux.amd64", "1.2.3+20260101"},
		{"pre-release and metadata", "1.2.3-rc.1+abc", "1.2.3-rc.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compare(tc.a, tc.b)
			if err != nil || got != 0 {
				t.Errorf("Compare(%s, %s) = %d, %v; want 0", tc.a, tc.b, got, err)
			}
		})
	}
}

func TestCompareInvalid(t *testing.T) {
	for _, v := range []string{
		"", "1", "1.2", "1.2.3.4", "a.b.c", "01.2.3", "1.02.3", "1.2.3-",
		"1.2.3+", "1.2.3-rc..1", "1.2.3-01", "1.2.3-rc_1", "1.2.3+a..b", "vv1.2.3",
		"-1.2.3", "1.2.3 ",
	} {
		if _, err := Compare(v, "1.0.0"); !errors.Is(err, ErrVersion) {
			t.Errorf("Compare(%q) error = %v, want ErrVersion", v, err)
		}
	}
	// Valid edge cases.
	// (Numbers have no size limit in semver.org's grammar.)
	for _, v := range []string{"0.0.0", "1.2.3-0", "1.2.3-rc-1", "1.2.3-0a", "1.2.3+001", "99999999999999999999.0.0"} {
		if _, err := Compare(v, "1.0.0"); err != nil {
			t.Errorf("Compare(%q): %v", v, err)
		}
	}
}
