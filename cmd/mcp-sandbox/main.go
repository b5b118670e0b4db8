package main

import (
	"context"
	"os"

	"github.com/mcp-sandbox/mcp-sandbox/app/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, os.Args[1:]))
}
