package filebackup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

const layout = "20060102-150405"

// Keep is how many backups of one file Prune leaves: the oldest, which
// holds the file as it was before this program first changed it, and the
// newest Keep-1.
const Keep = 5

// Name is <file>.<YYYYMMDD-HHMMSS>.bak, with -2, -3, … before .bak for
// further backups within the same second.
func Name(file string, t time.Time, n int) string {
	name := file + "." + t.Format(layout)
	if n > 1 {
		name += "-" + strconv.Itoa(n)
	}
	return name + ".bak"
}

// Create writes data, the file's current content, beside it as a backup
// named for t with mode perm, never overwriting an earlier backup, and
// returns its path.
func Create(file string, data []byte, perm fs.FileMode, t time.Time) (string, error) {
	for n := 1; n < 1000; n++ {
		name := Name(file, t, n)
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", file, err)
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(name)
			return "", fmt.Errorf("back up %s: %w", file, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("back up %s: too many backups within one second", file)
}

// Prune removes the backups of file beyond Keep, sparing the oldest and the
// newest. It reports nothing: a backup that cannot be removed is merely
// kept.
func Prune(file string) {
	all := List(file)
	if len(all) <= Keep {
		return
	}
	for _, p := range all[1 : len(all)-(Keep-1)] {
		_ = os.Remove(p)
	}
}

// Latest returns the newest backup of file, or "".
func Latest(file string) string {
	all := List(file)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1]
}

// List returns the backups of file that Create made, oldest first.
func List(file string) []string {
	dir, base := filepath.Dir(file), filepath.Base(file)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	type found struct {
		name string
		t    time.Time
		n    int
	}
	var all []found
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if stamp, ok = strings.CutSuffix(stamp, ".bak"); !ok {
			continue
		}
		n := 1
		if len(stamp) > len(layout) && stamp[len(layout)] == '-' {
			v, err := strconv.Atoi(stamp[len(layout)+1:])
			if err != nil {
				continue
			}
			n, stamp = v, stamp[:len(layout)]
		}
		t, err := time.Parse(layout, stamp)
		if err != nil {
			continue
		}
		all = append(all, found{e.Name(), t, n})
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].t.Equal(all[j].t) {
			return all[i].t.Before(all[j].t)
		}
		return all[i].n < all[j].n
	})
	out := make([]string, len(all))
	for i, f := range all {
		out[i] = filepath.Join(dir, f.name)
	}
	return out
}
