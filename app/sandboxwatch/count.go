package sandboxwatch

import "strconv"

// Count is the one counting rule for sandboxes, used by every place that
// shows a number (the tray's menu and title, the window's headline and
// Sandboxes tab, Pause's and Stop all's dialogs and notifications): a
// sandbox is a container a client asked for (claimed pool containers
// included); an unclaimed warm-pool container is not one, and is counted
// apart as "warm".
type Count struct {
	Sandboxes int
	Warm      int
}

// CountRows counts rows by the rule: Pool rows are warm, the rest are
// sandboxes.
func CountRows(rows []Row) Count {
	var c Count
	for _, r := range rows {
		if r.Pool {
			c.Warm++
		} else {
			c.Sandboxes++
		}
	}
	return c
}

// Count counts the snapshot's rows.
func (s Snapshot) Count() Count { return CountRows(s.Rows) }

// Add sums two counts (what Stop all removed from several lists, say).
func (c Count) Add(d Count) Count {
	return Count{Sandboxes: c.Sandboxes + d.Sandboxes, Warm: c.Warm + d.Warm}
}

// String is "1 sandbox", "2 sandboxes · 1 warm", "0 sandboxes": the warm
// pool only when there is one.
func (c Count) String() string {
	s := Sandboxes(c.Sandboxes)
	if c.Warm > 0 {
		s += " · " + strconv.Itoa(c.Warm) + " warm"
	}
	return s
}

// Sandboxes is "1 sandbox" or "N sandboxes".
func Sandboxes(n int) string {
	if n == 1 {
		return "1 sandbox"
	}
	return strconv.Itoa(n) + " sandboxes"
}
