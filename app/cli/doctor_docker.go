package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// printDockerSection prints r for a person: the endpoint in use and why,
// what each candidate answered, the places where nothing was, and the hint.
func printDockerSection(w io.Writer, r *dockerhost.Result) {
	fmt.Fprintln(w, "Docker")
	switch ex := r.Explicit(); {
	case r.Chosen != nil:
		c := r.Chosen
		fmt.Fprintf(w, "  using:  %s (%s, %s)\n", c.Host, c.Product(), c.OS)
	case ex != nil:
		fmt.Fprintf(w, "  using:  none: %s is chosen and no other engine is used in its place\n", ex.Choice())
	default:
		fmt.Fprintln(w, "  using:  none, no Docker engine answered")
	}
	fmt.Fprintf(w, "  why:    %s\n", r.Reason)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tSOURCE\tHOST\tSTATUS")
	listed, absent := r.Shown()
	for _, c := range listed {
		mark, status := "", c.Error
		if c.OK {
			status = "ok: " + c.Product()
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
