package install

import (
	"archive/tar"
	"cmp"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// State is what earlier install_packages calls left in a sandbox:
// the package specs asked for, per manager, and the top-level entries
// ("units") they put in the workspace. Each install reinstalls every spec
// in a fresh helper workspace and replaces the previous units whole, so
// the sandbox always holds one coherent set.
type State struct {
	specs map[string][]string // manager -> specs, in the order first asked
	units map[string][]string // manager -> workspace paths put there last time
}

// collectDir is, per manager, the directory of the helper's workspace that
// is copied into the sandbox's.
var collectDir = map[string]string{"pip": ".local", "npm": "node_modules"}

var pipName = regexp.MustCompile(`^[A-Za-z0-9._-]+`)

// packageName is the name a spec installs, normalised so that two specs of
// one package compare equal ("NumPy==1.26" and "numpy" are both "numpy").
func packageName(manager, spec string) string {
	if manager == "npm" {
		at := strings.LastIndex(spec, "@")
		if at > 0 {
			spec = spec[:at]
		}
		return spec
	}
	n := strings.ToLower(pipName.FindString(spec))
	return strings.Join(strings.FieldsFunc(n, func(r rune) bool { return r == '-' || r == '_' || r == '.' }), "-")
}

// mergeSpecs returns old with each spec of add replacing any old spec of
// the same package, new packages last.
func mergeSpecs(manager string, old, add []string) []string {
	out := make([]string, 0, len(old)+len(add))
	byName := map[string]int{}
	for _, s := range append(append([]string{}, old...), add...) {
		n := packageName(manager, s)
		if i, ok := byName[n]; ok {
			out[i] = s
			continue
		}
		byName[n] = len(out)
		out = append(out, s)
	}
	return out
}

// unitOf returns the replaceable top-level entry a workspace path belongs
// to: a package directory or file in the user site-packages, a script in
// .local/bin, a package (or @scope/package) in node_modules, a link in
// node_modules/.bin; "" for the directories that hold them.
func unitOf(name string) string {
	c := strings.Split(name, "/")
	depth := 0
	switch {
	case c[0] == ".local" && len(c) > 1 && c[1] == "lib":
		depth = 5 // .local/lib/python3.X/site-packages/NAME
	case c[0] == ".local":
		depth = 3 // .local/bin/NAME, .local/share/NAME, …
	case c[0] == "node_modules" && len(c) > 1 && (strings.HasPrefix(c[1], "@") || c[1] == ".bin"):
		depth = 3
	case c[0] == "node_modules":
		depth = 2
	}
	if depth == 0 || len(c) < depth {
		return ""
	}
	return strings.Join(c[:depth], "/")
}

// removeUnits removes workspace entries of an earlier install, by argument
// vector (never through a shell), in batches.
func removeUnits(ctx context.Context, h Host, units []string) error {
	rm, err := h.ToolPath(ctx, "rm")
	if err != nil {
		return fmt.Errorf("remove the earlier packages: rm: %w", err)
	}
	for len(units) > 0 {
		n := min(len(units), 200)
		argv := []string{rm, "-rf", "--"}
		for _, u := range units[:n] {
			argv = append(argv, path.Join(backend.Workspace, u))
		}
		units = units[n:]
		code, stderr, err := h.Exec(ctx, argv)
		if err != nil {
			return err
		}
		if code != 0 {
			return fmt.Errorf("remove the earlier packages: %s", strings.TrimSpace(stderr))
		}
	}
	return nil
}

// placePackages copies the helper's install tree (a tar stream of dir) into
// the sandbox's workspace, after removing what the previous install put
// there. Entries are checked and rewritten on the way: only files,
// directories and symlinks below dir, owned by the sandbox user, no setuid
// or setgid bits. They are unpacked by the image's tar run as the sandbox
// user, never through the engine's archive API, which writes as root into
// a tree the sandbox controls (a link swapped into /workspace/.local
// would lead it anywhere in the container). uid:gid own what is placed.
// It returns the units it placed.
func placePackages(ctx context.Context, h Host, uid, gid int, dir string, previous []string, r io.Reader) ([]string, error) {
	tarBin, err := h.ToolPath(ctx, "tar")
	if err != nil {
		return previous, fmt.Errorf("copy the installed packages into the sandbox: the image has no tar to unpack them with the sandbox user's rights: %w", err)
	}
	if err := removeUnits(ctx, h, previous); err != nil {
		return previous, err
	}
	pr, pw := io.Pipe()
	copied := make(chan error, 1)
	go func() {
		err := h.Untar(ctx, tarBin, backend.Workspace, pr)
		// The writer below must not block on a reader that has gone.
		pr.CloseWithError(cmp.Or(err, io.ErrClosedPipe))
		copied <- err
	}()
	units, werr := rewriteInstallTree(dir, uid, gid, r, pw)
	pw.CloseWithError(werr)
	cerr := <-copied
	if werr != nil {
		return units, werr
	}
	if cerr != nil {
		return units, fmt.Errorf("copy the installed packages into the sandbox: %w", cerr)
	}
	return units, nil
}

// rewriteInstallTree copies the tar stream r of an install tree rooted at
// dir to w, keeping only files, directories and symlinks below dir, owned
// by uid:gid, without setuid, setgid or sticky bits, and returns the units
// (see unitOf) it holds.
func rewriteInstallTree(dir string, uid, gid int, r io.Reader, w io.Writer) ([]string, error) {
	seen := map[string]bool{}
	var units []string
	tr := tar.NewReader(r)
	tw := tar.NewWriter(w)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return units, tw.Close()
		}
		if err != nil {
			return units, fmt.Errorf("read the installed files: %w", err)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name != dir && !strings.HasPrefix(name, dir+"/") || strings.ContainsAny(name, "\x00\n") {
			return units, fmt.Errorf("the installer's archive holds %q, outside %s", h.Name, dir)
		}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeReg, tar.TypeSymlink:
		default:
			continue // no hard links, devices or fifos
		}
		if u := unitOf(name); u != "" && !seen[u] {
			seen[u] = true
			units = append(units, u)
		}
		out := &tar.Header{
			Typeflag: h.Typeflag, Name: name, Linkname: h.Linkname, Size: h.Size,
			Mode: h.Mode & 0o777, Uid: uid, Gid: gid, ModTime: h.ModTime, Format: tar.FormatPAX,
		}
		if h.Typeflag == tar.TypeDir {
			out.Name += "/"
		}
		if h.Typeflag != tar.TypeReg {
			out.Size = 0
		}
		if err := tw.WriteHeader(out); err != nil {
			return units, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := io.Copy(tw, tr); err != nil {
				return units, fmt.Errorf("copy the installed files: %w", err)
			}
		}
	}
}
