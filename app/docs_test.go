package app

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// The docs' size limits: the README is read in five minutes, the contract
// stays the contract.
const (
	maxReadmeLines   = 300
	maxContractLines = 400
)

var (
	// link is a markdown link's target; external ones are skipped.
	link = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// inlineCode is a code span, whose text is not markdown.
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	// registered is how app/cli adds a command.
	registered = regexp.MustCompile(`register\(command\{name: "([a-z_-]+)"`)
	// invocation is the program followed by its command in a shell line:
	// `bin/mcp-sandbox doctor`, `"/Applications/…/mcp-sandbox" clients`.
	invocation = regexp.MustCompile(`(?m)(?:^|[\s/"'])mcp-sandbox(?:\.exe)?["']?[ \t]+([A-Za-z_][A-Za-z0-9_-]*)`)
)

// block is one fenced code block of a markdown file.
type block struct {
	lang, body string
	line       int // the opening fence's line
}

// doc is a markdown file of the repository, by its path from the root.
type doc struct {
	path, text string
	blocks     []block
}

// readDocs reads README.md, docs/*.md and sandbox/README.md.
func readDocs(t *testing.T) []doc {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil || len(names) == 0 {
		t.Fatalf("docs/*.md: %v (%d files)", err, len(names))
	}
	rels := []string{"README.md", filepath.Join("sandbox", "README.md")}
	for _, n := range names {
		rel, _ := filepath.Rel("..", n)
		rels = append(rels, rel)
	}
	var out []doc
	for _, rel := range rels {
		data, err := os.ReadFile(filepath.Join("..", rel))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, doc{path: filepath.ToSlash(rel), text: string(data), blocks: fencedBlocks(string(data))})
	}
	return out
}

// fencedBlocks returns the ``` blocks of a markdown text, indented ones
// (inside a list item) included, without their indent.
func fencedBlocks(text string) []block {
	var out []block
	var cur *block
	indent := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			indent = line[:len(line)-len(trimmed)]
			cur = &block{lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), line: i + 1}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.body += strings.TrimPrefix(line, indent) + "\n"
		}
	}
	return out
}

// quickStartConfig is the one toml block of the README's Quick start.
func quickStartConfig(t *testing.T, readme doc) string {
	t.Helper()
	_, section, ok := strings.Cut(readme.text, "\n## Quick start\n")
	if !ok {
		t.Fatal("README.md has no Quick start section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var found []string
	for _, b := range fencedBlocks(section) {
		if b.lang == "toml" {
			found = append(found, b.body)
		}
	}
	if len(found) != 1 {
		t.Fatalf("README.md's Quick start has %d toml blocks, want one", len(found))
	}
	return found[0]
}

// TestDocsConfigBlocks: every toml block of the README and docs/ is a
// valid config alone, and after the quick start's block, as a person
// pastes one below the other: a second [images] table is caught here,
// not by a server that cannot load its file.
func TestDocsConfigBlocks(t *testing.T) {
	docs := readDocs(t)
	qs := quickStartConfig(t, docs[0])
	n := 0
	for _, d := range docs {
		if d.path == "sandbox/README.md" {
			continue
		}
		for _, b := range d.blocks {
			if b.lang != "toml" {
				continue
			}
			n++
			where := d.path + ":" + strconv.Itoa(b.line)
			if _, err := config.Parse(where, []byte(b.body)); err != nil {
				t.Errorf("%s: the block alone does not load: %v", where, err)
			}
			if b.body == qs {
				continue
			}
			if _, err := config.Parse("quick start + "+where, []byte(qs+"\n"+b.body)); err != nil {
				t.Errorf("%s: the block after the README's quick-start block does not load: %v", where, err)
			}
		}
	}
	if n < 3 {
		t.Errorf("%d toml blocks found; the check would prove little", n)
	}
}

// TestDocsLinksResolve: every relative link of README.md, docs/ and
// sandbox/README.md leads to a file that exists and, with a #fragment, to
// a heading of that file.
func TestDocsLinksResolve(t *testing.T) {
	docs := readDocs(t)
	n := 0
	for _, d := range docs {
		for _, target := range links(d.text) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			file, frag, _ := strings.Cut(target, "#")
			p := filepath.Join("..", filepath.Dir(d.path), filepath.FromSlash(file))
			if file == "" {
				p = filepath.Join("..", d.path)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				if _, serr := os.Stat(p); serr == nil && frag == "" {
					continue // a directory
				}
				t.Errorf("%s links to %s, which does not exist", d.path, target)
				continue
			}
			if frag != "" && !slices.Contains(anchors(string(data)), frag) {
				t.Errorf("%s links to %s: no heading has the anchor #%s", d.path, target, frag)
			}
		}
	}
	if n == 0 {
		t.Error("no relative link found; the check would prove nothing")
	}
}

// links returns the link targets of a markdown text, outside code.
func links(text string) []string {
	var prose strings.Builder
	inBlock := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			prose.WriteString(inlineCode.ReplaceAllString(line, "") + "\n")
		}
	}
	var out []string
	for _, m := range link.FindAllStringSubmatch(prose.String(), -1) {
		out = append(out, m[1])
	}
	return out
}

// anchors returns the fragments GitHub gives a markdown file's headings:
// lower case, punctuation dropped, spaces as hyphens.
func anchors(text string) []string {
	var out []string
	inBlock := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			inBlock = !inBlock
		}
		if inBlock || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestDocsCommandsExist: every `mcp-sandbox COMMAND` a shell block of the
// docs runs is a command app/cli registers.
func TestDocsCommandsExist(t *testing.T) {
	commands := cliCommands(t)
	n := 0
	for _, d := range readDocs(t) {
		for _, b := range d.blocks {
			if b.lang != "sh" && b.lang != "bash" && b.lang != "shell" {
				continue
			}
			for _, m := range invocation.FindAllStringSubmatch(b.body, -1) {
				n++
				if !slices.Contains(commands, m[1]) {
					t.Errorf("%s:%d runs mcp-sandbox %s, which is not a command (commands: %s)", d.path, b.line, m[1], strings.Join(commands, ", "))
				}
			}
		}
	}
	if n < 3 {
		t.Errorf("%d commands found in sh blocks; the check would prove little", n)
	}
}

// cliCommands reads the commands app/cli registers, and help.
func cliCommands(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("cli", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"help"}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range registered.FindAllStringSubmatch(string(data), -1) {
			out = append(out, m[1])
		}
	}
	if len(out) < 5 {
		t.Fatalf("app/cli registers %v: the pattern %s no longer finds its commands", out, registered)
	}
	return out
}

// TestDocsLength: the README and the contract stay short enough to read.
func TestDocsLength(t *testing.T) {
	for _, c := range []struct {
		path string
		max  int
	}{{"README.md", maxReadmeLines}, {"sandbox/README.md", maxContractLines}} {
		data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(c.path)))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n > c.max {
			t.Errorf("%s has %d lines, at most %d: move detail to docs/ (or to a package's doc.go)", c.path, n, c.max)
		}
	}
}
