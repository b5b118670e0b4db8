package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// dockerSection finds the Docker endpoint the way the server will, with the
// command's environment, for the doctor's report.
func dockerSection(ctx context.Context, e *Env) *dockerhost.Result {
	return dockerhost.Detect(ctx, dockerhost.Options{Getenv: e.getenv})
}

// printDockerSection prints r for a person: the endpoint in use and why,
// what each candidate answered, the places where nothing was, and the hint.
func printDockerSection(w io.Writer, r *dockerhost.Result) {
	fmt.Fprintln(w, "Docker")
	if c := r.Chosen; c != nil {
		fmt.Fprintf(w, "  using:  %s (%s, %s)\n", c.Host, dockerProduct(c), c.OS)
	} else {
		fmt.Fprintln(w, "  using:  none, no Docker engine answered")
	}
	fmt.Fprintf(w, "  why:    %s\n", r.Reason)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tSOURCE\tHOST\tSTATUS")
	listed, absent := r.Shown()
	for _, c := range listed {
		mark, status := "", c.Error
		if c.OK {
			status = "ok: " + dockerProduct(c)
		}
		if c == r.Chosen {
			mark = "*"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", mark, c.Source, c.Host, status)
	}
	tw.Flush()
	if len(absent) > 0 {
		fmt.Fprintf(w, "  nothing at: %s\n", strings.Join(absent, ", "))
	}
	if r.Hint != "" {
		fmt.Fprintf(w, "  hint:   %s\n", r.Hint)
	}
}

// dockerProduct names a candidate's engine and version, such as "Colima 27.4.0".
func dockerProduct(c *dockerhost.Candidate) string {
	return strings.TrimSpace(c.Engine + " " + c.Version)
}
