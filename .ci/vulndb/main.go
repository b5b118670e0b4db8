// Command vulndb serves CI's govulncheck step where the vulnerability
// database's server (vuln.go.dev) cannot be reached but the Go module proxy
// can. It is not part of the shipped programs.
//
//	go run ./.ci/vulndb build -osv DIR -out DIR
//
// builds a database in govulncheck's v1 layout (index/db.json,
// index/modules.json, index/vulns.json, ID/<id>.json) from the OSV entries
// of the golang.org/x/vulndb module (its data/osv), as that repository's
// cmd/indexdb does; `govulncheck -db file://DIR` reads it.
//
//	govulncheck -format json ./... | go run ./.ci/vulndb gate
//
// prints what govulncheck found that the code calls and fails when one of
// those findings is fixed in a newer version of a required module (go get
// fixes it). Findings in the standard library (fixed by a newer Go) and
// findings without a fix are printed but do not fail the step.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: vulndb build -osv DIR -out DIR | vulndb gate < govulncheck.json")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		fs := flag.NewFlagSet("build", flag.ExitOnError)
		osvDir := fs.String("osv", "", "directory of OSV JSON files (golang.org/x/vulndb's data/osv)")
		out := fs.String("out", "", "directory to write the database to")
		fs.Parse(os.Args[2:])
		if *osvDir == "" || *out == "" {
			fmt.Fprintln(os.Stderr, "vulndb build: -osv and -out are required")
			os.Exit(2)
		}
		err = build(*osvDir, *out)
	case "gate":
		var failed bool
		failed, err = gate(os.Stdin, os.Stdout)
		if err == nil && failed {
			os.Exit(1)
		}
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulndb:", err)
		os.Exit(1)
	}
}

// entry is the part of an OSV entry the index needs.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
		Ranges []struct {
			Type   string `json:"type"`
			Events []struct {
				Introduced string `json:"introduced"`
				Fixed      string `json:"fixed"`
			} `json:"events"`
		} `json:"ranges"`
	} `json:"affected"`
}

type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Fixed    string    `json:"fixed,omitempty"`
}

type module struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

type vuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
}

func build(osvDir, out string) error {
	files, err := filepath.Glob(filepath.Join(osvDir, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no OSV entries in %s", osvDir)
	}
	if err := os.MkdirAll(filepath.Join(out, "index"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "ID"), 0o755); err != nil {
		return err
	}
	var dbModified time.Time
	modules := map[string]*module{}
	var vulns []vuln
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if e.ID == "" || filepath.Base(f) != e.ID+".json" {
			return fmt.Errorf("%s: the entry's id is %q", f, e.ID)
		}
		if e.Modified.After(dbModified) {
			dbModified = e.Modified
		}
		vulns = append(vulns, vuln{ID: e.ID, Modified: e.Modified, Aliases: e.Aliases})
		for _, a := range e.Affected {
			m := modules[a.Package.Name]
			if m == nil {
				m = &module{Path: a.Package.Name}
				modules[a.Package.Name] = m
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified, Fixed: latestFixed(a.Ranges)})
		}
		if err := os.WriteFile(filepath.Join(out, "ID", e.ID+".json"), raw, 0o644); err != nil {
			return err
		}
	}
	var mods []*module
	for _, m := range modules {
		sort.SliceStable(m.Vulns, func(i, j int) bool { return m.Vulns[i].ID < m.Vulns[j].ID })
		mods = append(mods, m)
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	sort.Slice(vulns, func(i, j int) bool { return vulns[i].ID < vulns[j].ID })
	for name, v := range map[string]any{
		"db.json":      map[string]time.Time{"modified": dbModified},
		"modules.json": mods,
		"vulns.json":   vulns,
	} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "index", name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("vulndb: %d entries, %d modules, written to %s\n", len(vulns), len(mods), out)
	return nil
}

// latestFixed is the latest version that fixes the vulnerability in a
// module's SEMVER ranges, or "" when it was reintroduced after that fix
// (golang.org/x/vulndb's osvutils.LatestFixed).
func latestFixed(ranges []struct {
	Type   string `json:"type"`
	Events []struct {
		Introduced string `json:"introduced"`
		Fixed      string `json:"fixed"`
	} `json:"events"`
}) string {
	before := func(a, b string) bool { return a == "" || semver.Compare("v"+a, "v"+b) < 0 }
	latest := ""
	for _, r := range ranges {
		if r.Type != "SEMVER" {
			continue
		}
		for _, e := range r.Events {
			if e.Fixed != "" && before(latest, e.Fixed) {
				latest = e.Fixed
			}
		}
		for _, e := range r.Events {
			if e.Introduced != "" && e.Introduced != "0" && before(latest, e.Introduced) {
				latest = ""
				break
			}
		}
	}
	return latest
}

// finding is the part of govulncheck's JSON finding the gate reads.
type finding struct {
	OSV          string `json:"osv"`
	FixedVersion string `json:"fixed_version"`
	Trace        []struct {
		Module   string `json:"module"`
		Version  string `json:"version"`
		Package  string `json:"package"`
		Function string `json:"function"`
	} `json:"trace"`
}

// gate reads govulncheck's JSON stream and reports the findings the code
// reaches (a trace down to a function). It says failed when one of them is
// in a module other than the standard library and has a fix.
func gate(r io.Reader, w io.Writer) (failed bool, err error) {
	type key struct{ osv, module string }
	seen := map[key]finding{}
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var msg struct {
			Finding *finding `json:"finding"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			break
		} else if err != nil {
			return false, fmt.Errorf("reading govulncheck's output: %w", err)
		}
		f := msg.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue // not called: imported or required only
		}
		seen[key{f.OSV, f.Trace[0].Module}] = *f
	}
	keys := make([]key, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].module != keys[j].module {
			return keys[i].module < keys[j].module
		}
		return keys[i].osv < keys[j].osv
	})
	for _, k := range keys {
		f := seen[k]
		at := f.Trace[0].Module + "@" + f.Trace[0].Version
		switch {
		case f.FixedVersion == "":
			fmt.Fprintf(w, "no fix yet:       %s in %s\n", k.osv, at)
		case k.module == "stdlib" || k.module == "toolchain":
			fmt.Fprintf(w, "needs a newer Go: %s in %s, fixed in %s\n", k.osv, at, f.FixedVersion)
		default:
			fmt.Fprintf(w, "FIX (go get):     %s in %s, fixed in %s\n", k.osv, at, f.FixedVersion)
			failed = true
		}
	}
	if len(keys) == 0 {
		fmt.Fprintln(w, "govulncheck: the code calls no known vulnerable function")
	}
	if failed {
		fmt.Fprintln(w, strings.TrimSpace(`
A module the programs call into has a fixed version: go get it (the same
govulncheck without -format json shows the call paths).`))
	}
	return failed, nil
}
