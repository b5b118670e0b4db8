package hostfs

import (
	"bufio"
	"os"
	"regexp"
	"strings"
)

// ignoreRule is one line of a .gitignore file.
type ignoreRule struct {
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
}

// ignoreFile holds the rules of one .gitignore, which apply below base (a
// slash-separated path relative to the copied tree's top, "" for the top).
type ignoreFile struct {
	base  string
	rules []ignoreRule
}

// parseGitignore reads the rules of a .gitignore file the way git does for
// the common forms: comments, negation, directory-only patterns, anchored
// patterns (with a slash), and the * ? [..] ** wildcards.
func parseGitignore(base, content string) ignoreFile {
	f := ignoreFile{base: base}
	sc := bufio.NewScanner(strings.NewReader(content))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if !strings.HasSuffix(line, `\ `) {
			line = strings.TrimRight(line, " ")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		if line == "" {
			continue
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		expr := globToRegexp(line)
		if !anchored {
			expr = `(?:.*/)?` + expr
		}
		re, err := regexp.Compile(`^` + expr + `$`)
		if err != nil {
			continue
		}
		r.re = re
		f.rules = append(f.rules, r)
	}
	return f
}

// globToRegexp turns a gitignore glob into a regular expression over a
// slash-separated relative path.
func globToRegexp(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case strings.HasPrefix(g[i:], "**/"):
			b.WriteString(`(?:.*/)?`)
			i += 2
		case strings.HasPrefix(g[i:], "/**") && i+3 == len(g):
			b.WriteString(`/.*`)
			i += 2
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(`.*`)
			i++
		case c == '*':
			b.WriteString(`[^/]*`)
		case c == '?':
			b.WriteString(`[^/]`)
		case c == '[':
			j := strings.IndexByte(g[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		case c == '\\' && i+1 < len(g):
			i++
			b.WriteString(regexp.QuoteMeta(string(g[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// ignorer answers "is this path ignored?" for a tree, from the .gitignore
// files found so far (outer first).
type ignorer struct {
	files []ignoreFile
}

// load adds the .gitignore of directory dir (relative, "" for the top),
// opened as d, if there is one.
func (ig *ignorer) load(d *os.Root, relDir string) {
	info, err := d.Lstat(".gitignore")
	if err != nil || !info.Mode().IsRegular() || info.Size() > 1<<20 {
		return
	}
	data, err := d.ReadFile(".gitignore")
	if err != nil || len(data) > 1<<20 {
		return
	}
	ig.files = append(ig.files, parseGitignore(relDir, string(data)))
}

// ignored reports whether rel (slash-separated, relative to the tree's top)
// is ignored. The last matching rule wins, deeper files over outer ones.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	ignored := false
	for _, f := range ig.files {
		p := rel
		if f.base != "" {
			if !strings.HasPrefix(rel, f.base+"/") {
				continue
			}
			p = rel[len(f.base)+1:]
		}
		for _, r := range f.rules {
			if r.dirOnly && !isDir {
				continue
			}
			if r.re.MatchString(p) {
				ignored = !r.negate
			}
		}
	}
	return ignored
}
