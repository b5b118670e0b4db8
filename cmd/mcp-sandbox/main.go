// Command mcp-sandbox is the MCP server that AI clients spawn (`mcp-sandbox
// serve`) and the command line around it (doctor, clients, ps, stop, run,
// version). It is pure Go: it must start on a machine with no display.
package main

import (
	"context"
	"os"

	"github.com/mcp-sandbox/mcp-sandbox/app/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, os.Args[1:]))
}
