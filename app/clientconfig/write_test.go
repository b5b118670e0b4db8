package clientconfig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/filebackup"
)

const realistic = "testdata/golden/claude/realistic.before.json"

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fixture(t *testing.T) []byte {
	t.Helper()
	return []byte(readFile(t, realistic))
}

func installOpts(env Env) InstallOptions {
	return InstallOptions{Env: env, Command: goldenCommand, DockerHost: goldenDockerHost}
}

// leftovers lists files in dir that are neither the config nor a backup:
// temporary files and lock files must not stay behind.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") || strings.HasSuffix(e.Name(), ".lock") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestReadOnlyFile(t *testing.T) {
	before := fixture(t)
	env, _, path := setUp(t, claudeDesktop, before)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	_, err := claudeDesktop.Install(context.Background(), installOpts(env))
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Install into a read-only file: %v, want ErrReadOnly", err)
	}
	if got := readFile(t, path); got != string(before) {
		t.Errorf("read-only file changed:\n%s", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o444 {
		t.Errorf("mode = %v, want 0444", fi.Mode().Perm())
	}
	if b := backups(t, path); len(b) != 0 {
		t.Errorf("backups = %v", b)
	}
	if l := leftovers(t, filepath.Dir(path)); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

func TestSymlinkedConfig(t *testing.T) {
	before := fixture(t)
	env, home, path := setUp(t, claudeDesktop, nil)
	dotfiles := filepath.Join(home, "dotfiles")
	if err := os.MkdirAll(dotfiles, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dotfiles, "claude.json")
	if err := os.WriteFile(target, before, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	res, err := claudeDesktop.Install(context.Background(), installOpts(env))
	if err != nil {
		t.Fatal(err)
	}
	if res.RealPath != target || res.Path != path {
		t.Errorf("Result paths = %q, %q; want %q through %q", res.Path, res.RealPath, path, target)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	if got := readFile(t, target); !strings.Contains(got, goldenCommand) {
		t.Errorf("target not written:\n%s", got)
	}
	if len(backups(t, target)) != 1 || filepath.Dir(res.Backup) != dotfiles {
		t.Errorf("backup %q, want one beside the target", res.Backup)
	}
	st, err := claudeDesktop.Status(StatusOptions{Env: env, Command: goldenCommand, DockerHost: goldenDockerHost})
	if err != nil || st.RealPath != target || !st.Matches || st.LastBackup != res.Backup {
		t.Errorf("Status = %+v, %v", st, err)
	}
}

func TestDanglingSymlink(t *testing.T) {
	env, home, path := setUp(t, claudeDesktop, nil)
	if err := os.Symlink(filepath.Join(home, "gone.json"), path); err != nil {
		t.Fatal(err)
	}
	if _, err := claudeDesktop.Install(context.Background(), installOpts(env)); err == nil {
		t.Fatal("Install through a dangling link succeeded")
	}
	if target, err := os.Readlink(path); err != nil || target != filepath.Join(home, "gone.json") {
		t.Errorf("link changed: %q, %v", target, err)
	}
}

func TestModeKept(t *testing.T) {
	env, _, path := setUp(t, cursor, fixture(t))
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	res, err := cursor.Install(context.Background(), installOpts(env))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, res.Backup} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v, %v; want 0640", p, fi.Mode().Perm(), err)
		}
	}
	if l := leftovers(t, filepath.Dir(path)); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}

	// A file we create is private to its owner, as is a directory.
	env2, home2 := testEnv(t)
	if _, err := cursor.Install(context.Background(), InstallOptions{Env: env2, Command: goldenCommand, Force: true}); err != nil {
		t.Fatal(err)
	}
	created := filepath.Join(home2, ".cursor")
	if fi, _ := os.Stat(created); fi.Mode().Perm() != 0o700 {
		t.Errorf("created dir mode %v, want 0700", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Join(created, "mcp.json")); fi.Mode().Perm() != 0o600 {
		t.Errorf("created file mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestBackupNames(t *testing.T) {
	fixed := time.Date(2025, 1, 2, 3, 4, 5, 0, time.Local)
	now = func() time.Time { return fixed }
	t.Cleanup(func() { now = time.Now })
	env, _, path := setUp(t, cursor, fixture(t))
	ctx := context.Background()
	var got []string
	for _, host := range []string{"unix:///a.sock", "unix:///b.sock", "unix:///c.sock"} {
		opts := installOpts(env)
		opts.DockerHost = host
		res, err := cursor.Install(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.Base(res.Backup))
	}
	want := []string{"mcp.json.20250102-030405.bak", "mcp.json.20250102-030405-2.bak", "mcp.json.20250102-030405-3.bak"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("backups = %v, want %v", got, want)
	}
	if first := readFile(t, filepath.Join(filepath.Dir(path), want[0])); first != string(fixture(t)) {
		t.Errorf("first backup is not the original file:\n%s", first)
	}
	if last := filebackup.Latest(path); filepath.Base(last) != want[2] {
		t.Errorf("lastBackup = %q, want %q", last, want[2])
	}
}

// Backups do not pile up: the oldest (the file before we first touched it)
// and the newest four are kept; files we did not make are never touched.
func TestBackupsPruned(t *testing.T) {
	clock := time.Date(2025, 1, 2, 23, 59, 58, 0, time.Local)
	now = func() time.Time { return clock }
	t.Cleanup(func() { now = time.Now })
	env, _, path := setUp(t, cursor, fixture(t))
	dir := filepath.Dir(path)
	mine := filepath.Join(dir, "mcp.json.mine.bak")
	if err := os.WriteFile(mine, []byte("the user's own"), 0o600); err != nil {
		t.Fatal(err)
	}
	var made []string
	for i := range 8 {
		opts := installOpts(env)
		opts.DockerHost = fmt.Sprintf("unix:///%d.sock", i)
		res, err := cursor.Install(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, filepath.Base(res.Backup))
		if i%3 != 1 { // two backups within one second now and then
			clock = clock.Add(time.Second)
		}
	}
	var left []string
	for _, p := range filebackup.List(path) {
		left = append(left, filepath.Base(p))
	}
	want := append([]string{made[0]}, made[len(made)-4:]...)
	if strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("backups left = %v, want %v (made %v)", left, want, made)
	}
	if first := readFile(t, filepath.Join(dir, made[0])); first != string(fixture(t)) {
		t.Errorf("the oldest backup is not the original file:\n%s", first)
	}
	if got := readFile(t, mine); got != "the user's own" {
		t.Errorf("a backup we did not make was changed: %q", got)
	}
	if last := filebackup.Latest(path); filepath.Base(last) != made[len(made)-1] {
		t.Errorf("lastBackup = %q, want %q", last, made[len(made)-1])
	}
}

func TestNotInstalled(t *testing.T) {
	env, home := testEnv(t)
	ctx := context.Background()
	_, err := cursor.Install(ctx, installOpts(env))
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Install for a client that is not there: %v, want ErrNotInstalled", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".cursor")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("config directory created anyway: %v", err)
	}
	// Uninstall has nothing to do and creates nothing either.
	res, err := cursor.Uninstall(ctx, UninstallOptions{Env: env})
	if err != nil || res.Changed {
		t.Errorf("Uninstall = %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(home, ".cursor")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Uninstall created the directory: %v", err)
	}
	if _, err := cursor.Install(ctx, InstallOptions{Env: env, Command: "mcp-sandbox", Force: true}); err == nil {
		t.Errorf("Install with a relative command succeeded")
	}
}

func TestDryRun(t *testing.T) {
	before := fixture(t)
	env, home, path := setUp(t, claudeDesktop, before)
	res, err := claudeDesktop.Install(context.Background(), InstallOptions{Env: env, Command: goldenCommand, DockerHost: goldenDockerHost, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.Written || res.Backup != "" {
		t.Errorf("dry run result = %+v", res)
	}
	checkGolden(t, "testdata/dryrun-install.diff", []byte(strings.ReplaceAll(res.Diff, home, "$HOME")))
	if got := readFile(t, path); got != string(before) {
		t.Errorf("dry run wrote the file")
	}
	if b := backups(t, path); len(b) != 0 {
		t.Errorf("dry run made backups: %v", b)
	}
	if l := leftovers(t, filepath.Dir(path)); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}

	// Nothing is created for a file that does not exist yet either.
	env2, home2 := testEnv(t)
	res, err = cursor.Install(context.Background(), InstallOptions{Env: env2, Command: goldenCommand, DryRun: true, Force: true})
	if err != nil || !res.Created || !strings.HasPrefix(res.Diff, "--- /dev/null\n") {
		t.Errorf("dry run of a new file = %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(home2, ".cursor")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run created the directory: %v", err)
	}

	// And the uninstall diff.
	env3, home3, _ := setUp(t, claudeDesktop, []byte(readFile(t, "testdata/golden/claude/stale.before.json")))
	res, err = claudeDesktop.Uninstall(context.Background(), UninstallOptions{Env: env3, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "testdata/dryrun-uninstall.diff", []byte(strings.ReplaceAll(res.Diff, home3, "$HOME")))
}

// TestConcurrentInstalls runs installs at once, as a tray and a CLI might:
// the lock serialises them, so the first writes and backs up and the others
// find nothing to do.
func TestConcurrentInstalls(t *testing.T) {
	env, _, path := setUp(t, cursor, fixture(t))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := cursor.Install(context.Background(), installOpts(env))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if b := backups(t, path); len(b) != 1 {
		t.Errorf("backups = %v, want exactly one", b)
	}
	if l := leftovers(t, filepath.Dir(path)); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

func TestLockWaitsForHolder(t *testing.T) {
	env, _, path := setUp(t, cursor, fixture(t))
	release, err := lockConfig(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := cursor.Install(ctx, installOpts(env)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Install while locked: %v, want a deadline error", err)
	}
	if got := readFile(t, path); got != string(fixture(t)) {
		t.Errorf("file changed while locked")
	}
	release()
	if _, err := cursor.Install(context.Background(), installOpts(env)); err != nil {
		t.Errorf("Install after release: %v", err)
	}
}

func TestWriteAtomicAborts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := writeAtomic(path, []byte("new"), 0o600, nil, func() error { return errChangedMeanwhile })
	if !errors.Is(err, errChangedMeanwhile) {
		t.Fatalf("writeAtomic = %v", err)
	}
	if got := readFile(t, path); got != "old" {
		t.Errorf("file = %q, want the old content", got)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}
