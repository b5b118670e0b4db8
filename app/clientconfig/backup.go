package clientconfig

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

// now is the clock backups are named by; tests set it.
var now = time.Now

const backupLayout = "20060102-150405"

// backupName is <file>.<YYYYMMDD-HHMMSS>.bak, with -2, -3, … before .bak
// for further backups within the same second.
func backupName(file string, t time.Time, n int) string {
	name := file + "." + t.Format(backupLayout)
	if n > 1 {
		name += "-" + strconv.Itoa(n)
	}
	return name + ".bak"
}

// backup copies data, the file's current content, beside it with the
// file's mode, never overwriting an earlier backup, and returns its path.
func backup(file string, data []byte, perm fs.FileMode) (string, error) {
	t := now()
	for n := 1; ; n++ {
		name := backupName(file, t, n)
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
}

// keepBackups is how many backups of one file are kept: the oldest, which
// holds the file as it was before this program first changed it, and the
// newest keepBackups-1.
const keepBackups = 5

// pruneBackups removes the backups of file beyond keepBackups, sparing the
// oldest and the newest. It reports nothing: a backup that cannot be removed
// is merely kept.
func pruneBackups(file string) {
	all := backupsOf(file)
	if len(all) <= keepBackups {
		return
	}
	for _, p := range all[1 : len(all)-(keepBackups-1)] {
		_ = os.Remove(p)
	}
}

// lastBackup returns the newest backup of file, or "".
func lastBackup(file string) string {
	all := backupsOf(file)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1]
}

// backupsOf lists the backups of file that backup made, oldest first.
func backupsOf(file string) []string {
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
		stamp, ok = strings.CutSuffix(stamp, ".bak")
		if !ok {
			continue
		}
		n := 1
		if len(stamp) > len(backupLayout) && stamp[len(backupLayout)] == '-' {
			v, err := strconv.Atoi(stamp[len(backupLayout)+1:])
			if err != nil {
				continue
			}
			n, stamp = v, stamp[:len(backupLayout)]
		}
		t, err := time.Parse(backupLayout, stamp)
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
