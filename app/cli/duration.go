package cli

import (
	"fmt"
	"strconv"
	"time"
)

// durationValue is a flag that takes a Go duration ("30s", "2m") and, for
// the flags that took whole seconds before durations, a plain number of
// seconds ("30"), so existing scripts keep working.
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }

func (d *durationValue) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n < 0 {
			return fmt.Errorf("%s: a duration cannot be negative", s)
		}
		*d = durationValue(time.Duration(n * float64(time.Second)))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%s: want a duration such as 30s or 2m", s)
	}
	if v < 0 {
		return fmt.Errorf("%s: a duration cannot be negative", s)
	}
	*d = durationValue(v)
	return nil
}
