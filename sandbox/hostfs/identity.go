package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A denied place is known by what it is, not by how its name is spelled.
// Names have cases (macOS and Windows compare them without), Unicode
// normal forms, 8.3 short forms, second names made by bind mounts and hard
// links, and symlinks: each is the same file to the kernel, and so to the
// fence. A deny list is resolved once per call to the identities (device
// and inode; volume serial and file index on Windows) of the files and
// directories it names, and every directory and file a copy opens is
// compared with them through the handle it actually reads or writes.
//
// A hard link has no name in common with the file it links to, and a file
// inside a denied directory has its own identity. A regular file with more
// than one link could therefore be a second name of a file inside a denied
// directory (~/.ssh/id_rsa linked as ~/notes/x): such a file is compared
// with the identities of the linked files found by walking the denied
// directories (at most maxLinkWalk entries); when the walk could not
// finish, every such file is refused, since it cannot be cleared. In the
// same way a directory that is the root of a mount of a subdirectory
// (Linux: a bind mount of ~/.ssh/keys at ~/keys, whose ".." is ~) is
// compared with the directories found by that walk; past the walk's bound
// it is let through (a user's own bind mount of a large tree must not
// stop every copy).

// fileID is a file's identity: device and inode on Unix; volume serial
// number and file index on Windows.
type fileID struct{ dev, ino uint64 }

// ident is what the fence knows of an open file.
type ident struct {
	id    fileID
	nlink uint64
	dir   bool
	// mountRoot: a directory that is the root of a mount (Linux), which
	// can be a bind mount of a directory inside a denied one.
	mountRoot bool
}

// maxLinkWalk bounds the entries read from denied directories when looking
// for the other names of their hard-linked files.
const maxLinkWalk = 50000

// denySet is one deny list, resolved for one call.
type denySet struct {
	what  string     // the setting, for messages: "files.read_deny"
	rules []denyRule // the names, as written and resolved
	ids   map[fileID]string
	// links holds the identities of the regular files with more than one
	// link, and of the directories, found below the denied directories;
	// filled on first need.
	links      map[fileID]string
	linksDone  bool
	linksShort bool // the walk hit maxLinkWalk: linked files are refused
	// pending are entries that do not exist yet, known by the identity of
	// their nearest existing directory and the name below it, so that
	// they cannot be created through a second name of that directory.
	pending []pendingRule
}

// pendingRule is a denied place that does not exist yet.
type pendingRule struct {
	dir   fileID
	first string // the first missing component below dir
	entry string
	fold  bool
}

// newDenySet resolves entries (with "~" and the fence's home) to names and
// identities. An entry that does not exist keeps its names: a file made
// there later is still refused by name.
func (f Fence) newDenySet(what string, entries []string) *denySet {
	s := &denySet{what: what, ids: map[fileID]string{}}
	lk := f.lookup()
	for _, d := range entries {
		lex, err := f.expand(d)
		if err != nil || !filepath.IsAbs(lex) {
			continue
		}
		lex = filepath.Clean(lex)
		real, err := f.resolveRoot(d)
		if err != nil {
			real = lex
		}
		s.rules = append(s.rules, denyRule{entry: d, lex: lex, real: real, long: lk.longName(real), fold: lk.caseInsensitive(real)})
		if id, err := pathIdent(real); err == nil {
			if _, ok := s.ids[id.id]; !ok {
				s.ids[id.id] = d
			}
		} else {
			s.addPending(real, d, lk)
		}
	}
	return s
}

// addPending records a missing entry by its nearest existing directory.
func (s *denySet) addPending(p, entry string, lk nameLookup) {
	for cur := p; ; {
		up := filepath.Dir(cur)
		if up == cur {
			return
		}
		if id, err := pathIdent(up); err == nil && id.dir {
			s.pending = append(s.pending, pendingRule{dir: id.id, first: filepath.Base(cur), entry: entry, fold: lk.caseInsensitive(up)})
			return
		}
		cur = up
	}
}

// byPending returns the entry that creating name in the directory dir
// would create or enter; "" if none.
func (s *denySet) byPending(dir fileID, name string) string {
	for _, r := range s.pending {
		if r.dir == dir && (r.first == name || r.fold && foldName(r.first) == foldName(name)) {
			return r.entry
		}
	}
	return ""
}

// byName returns the entry p (absolute, clean) is at or below, by name:
// as written, resolved, with short names expanded, and without case on a
// volume that ignores it; "" if none.
func (s *denySet) byName(lk nameLookup, p string) string {
	long := lk.longName(p)
	for _, r := range s.rules {
		if within(r.lex, p) || within(r.real, p) {
			return r.entry
		}
		if (long != p || r.long != r.real) && within(r.long, long) {
			return r.entry
		}
		if r.fold && (withinFold(r.lex, p) || withinFold(r.real, p) || withinFold(r.long, long)) {
			return r.entry
		}
	}
	return ""
}

// covers returns an entry at or below p (absolute, clean), by name: the
// places that replacing p would replace; "" if none.
func (s *denySet) covers(p string) string {
	for _, r := range s.rules {
		if within(p, r.lex) || within(p, r.real) || r.fold && (withinFold(p, r.lex) || withinFold(p, r.real)) {
			return r.entry
		}
	}
	return ""
}

// byIdent returns the entry whose file id is, or (for a regular file with
// more than one link, or a directory that is a mount's root) a file or
// directory inside a denied directory; "" if none.
func (s *denySet) byIdent(id ident) string {
	if d, ok := s.ids[id.id]; ok {
		return d
	}
	if id.dir && !id.mountRoot || !id.dir && id.nlink <= 1 {
		return ""
	}
	s.walkLinks()
	if d, ok := s.links[id.id]; ok {
		return d
	}
	if s.linksShort && !id.dir {
		// A linked file that cannot be cleared is refused; a mount's root
		// is not (see the package comment above).
		return "a hard link that could not be told apart from the files of " + s.what
	}
	return ""
}

// walkLinks collects, once, the identities of the linked regular files
// below the denied directories.
func (s *denySet) walkLinks() {
	if s.linksDone {
		return
	}
	s.linksDone = true
	s.links = map[fileID]string{}
	seen := 0
	for _, r := range s.rules {
		err := filepath.WalkDir(r.real, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: nothing of it can be copied either
			}
			if seen++; seen > maxLinkWalk {
				return errWalkShort
			}
			if !d.Type().IsRegular() && !d.IsDir() {
				return nil
			}
			if id, ok := entryIdent(p, d); ok && (id.dir || id.nlink > 1) {
				s.links[id.id] = r.entry
			}
			return nil
		})
		if errors.Is(err, errWalkShort) {
			s.linksShort = true
			return
		}
	}
}

var errWalkShort = errors.New("walk bound reached")

// refuse wraps a refusal of p, denied as entry.
func (s *denySet) refuse(p, entry string) error {
	return fmt.Errorf("%w: %s is %s, which %s protects (compared by identity, not by name)", ErrFence, p, describeEntry(entry), s.what)
}

func describeEntry(entry string) string {
	if strings.HasPrefix(entry, "a hard link") {
		return entry
	}
	return "or is inside " + entry
}

// checkFile refuses the open file fh (shown as p) when it, by identity, is
// denied.
func (s *denySet) checkFile(fh *os.File, p string) error {
	id, err := handleIdent(fh)
	if err != nil {
		return fmt.Errorf("%w: cannot tell what %s is: %v", ErrFence, p, err)
	}
	if d := s.byIdent(id); d != "" {
		return s.refuse(p, d)
	}
	return nil
}

// checkRoot refuses the directory open as r (shown as p) when it is
// denied by identity.
func (s *denySet) checkRoot(r *os.Root, p string) error {
	fh, err := r.Open(".")
	if err != nil {
		return err
	}
	defer fh.Close()
	return s.checkFile(fh, p)
}

// checkChain refuses the directory open as r (shown as p) when it, or any
// directory above it as the kernel sees it (not as its name says), is
// denied by identity.
func (s *denySet) checkChain(r *os.Root, p string) error {
	fh, err := r.Open(".")
	if err != nil {
		return err
	}
	defer fh.Close()
	return s.checkDirChain(fh, p)
}

// checkDirChain is checkChain for a directory open as fh.
func (s *denySet) checkDirChain(fh *os.File, p string) error {
	ids, err := ancestry(fh)
	if err != nil {
		return fmt.Errorf("%w: cannot tell where %s is: %v", ErrFence, p, err)
	}
	for _, id := range ids {
		if d := s.byIdent(id); d != "" {
			return s.refuse(p, d)
		}
	}
	return nil
}

// checkPath refuses p (resolved) early, with a plain message, when it or
// a directory above it is denied by identity. The copy's own walk checks
// again through the handles it reads.
func (s *denySet) checkPath(p string) error {
	if id, err := pathIdent(p); err == nil {
		if d := s.byIdent(id); d != "" {
			return s.refuse(p, d)
		}
	}
	dir, err := os.Open(filepath.Dir(p))
	if err != nil {
		return nil // the walk meets the same error and says so
	}
	defer dir.Close()
	return s.checkDirChain(dir, p)
}

// rootIdent is the identity of the directory open as r.
func rootIdent(r *os.Root) (ident, error) {
	fh, err := r.Open(".")
	if err != nil {
		return ident{}, err
	}
	defer fh.Close()
	return handleIdent(fh)
}

// entryIn is the identity of the entry name of r (not following a final
// symlink: replacing a link's name does not change what it points to);
// ok is false for a symlink or when it cannot be read.
func entryIn(r *os.Root, name string) (ident, bool) {
	info, err := r.Lstat(name)
	if err != nil || info.Mode()&fs.ModeSymlink != 0 {
		return ident{}, false
	}
	if id, ok := infoIdent(info); ok {
		return id, true
	}
	fh, err := r.OpenFile(name, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return ident{}, false
	}
	defer fh.Close()
	id, err := handleIdent(fh)
	return id, err == nil
}
