package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
)

// filesReport says what the copy tools may touch and what they never do
// (the deny lists, with MCP Sandbox's own places, compared by identity),
// with warnings where a root covers protected places in a way a user may
// not expect.
type filesReport struct {
	ReadRoots   []string `json:"read_roots"`
	WriteRoot   string   `json:"write_root"`
	ReadDenied  []string `json:"read_denied"`
	WriteDenied []string `json:"write_denied"`
	Warnings    []string `json:"warnings"`
}

// checkFiles builds the host-files part of the report for cfg, with home
// for "~".
func checkFiles(cfg *config.Config, home string) filesReport {
	own := hostcopy.ProtectedPaths(cfg)
	r := filesReport{
		ReadRoots:   cfg.Files.ReadRoots,
		WriteRoot:   cfg.Files.WriteRoot,
		ReadDenied:  append(slices.Clone(cfg.Files.ReadDeny), own...),
		WriteDenied: append(slices.Clone(cfg.Files.WriteDeny), own...),
		Warnings:    []string{},
	}
	warn := func(format string, args ...any) { r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...)) }
	expand := func(p string) string {
		if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
			p = filepath.Join(home, p[1:])
		}
		return filepath.Clean(p)
	}
	var writeDenied []string
	for _, d := range r.WriteDenied {
		if d == "$PATH" {
			writeDenied = append(writeDenied, filepath.SplitList(os.Getenv("PATH"))...)
			continue
		}
		writeDenied = append(writeDenied, d)
	}
	wr := expand(cfg.Files.WriteRoot)
	if covered := coveredBy(wr, writeDenied, expand); len(covered) > 0 {
		warn("files.write_root = %q covers %d protected places (%s): copy_out refuses them, by identity, whatever their name, but can write anything else there; a directory of its own such as ~/Downloads/mcp-sandbox is safer",
			cfg.Files.WriteRoot, len(covered), sample(covered))
	}
	for _, d := range writeDenied {
		if d != "" && filepath.IsAbs(expand(d)) && within(expand(d), wr) {
			warn("files.write_root = %q is inside %s, which files.write_deny protects: every copy_out will be refused", cfg.Files.WriteRoot, d)
			break
		}
	}
	for _, root := range cfg.Files.ReadRoots {
		rr := expand(root)
		if within(rr, filepath.Dir(home)) {
			warn("files.read_roots holds %q, which covers more than your home directory (other users' files, system files); copy_in still never reads the %d entries of files.read_deny", root, len(r.ReadDenied))
		}
	}
	if cfg.Files.ReadDenyReplace {
		warn("files.read_deny_replace = true: the built-in list of credential places is not used, only the %d entries of the file (and MCP Sandbox's own config and state)", len(cfg.Files.ReadDeny))
	}
	if cfg.Files.WriteDenyReplace {
		warn("files.write_deny_replace = true: the built-in list (shell start-up files, ~/.ssh, autostart, client configs, PATH) is not used, only the %d entries of the file (and MCP Sandbox's own config and state)", len(cfg.Files.WriteDeny))
	}
	return r
}

// coveredBy returns the entries of denied (expanded) at or below root.
func coveredBy(root string, denied []string, expand func(string) string) []string {
	var out []string
	for _, d := range denied {
		if d == "" || !filepath.IsAbs(expand(d)) {
			continue
		}
		if within(root, expand(d)) {
			out = append(out, d)
		}
	}
	return out
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func sample(s []string) string {
	if len(s) <= 4 {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:4], ", ") + ", …"
}

func printFiles(w io.Writer, r filesReport) {
	fmt.Fprintln(w, "\nHost files")
	fmt.Fprintf(w, "  copy_in reads below: %s\n", strings.Join(r.ReadRoots, ", "))
	fmt.Fprintf(w, "  copy_out writes below: %s\n", r.WriteRoot)
	fmt.Fprintf(w, "  never read (%d places, by identity): %s\n", len(r.ReadDenied), strings.Join(r.ReadDenied, ", "))
	written := strings.ReplaceAll(strings.Join(r.WriteDenied, ", "), "$PATH", "$PATH (every PATH directory)")
	fmt.Fprintf(w, "  never written (%d places, by identity): %s\n", len(r.WriteDenied), written)
	for _, warning := range r.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warning)
	}
}
