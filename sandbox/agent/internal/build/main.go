package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent/internal/buildbin"
)

func main() {
	for _, arch := range buildbin.Arches {
		b, err := buildbin.Build(arch)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if b, err = buildbin.Compress(b); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(buildbin.File(arch), b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := os.WriteFile("prebuilt/GOVERSION", []byte(runtime.Version()+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
