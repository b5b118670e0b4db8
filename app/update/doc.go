// Package update tells the tray whether a newer MCP Sandbox has been
// released, and fetches it only when the user asks. It is off by default
// (config [update] check = false), is used only by the tray, never by the
// server that AI clients start, and writes nothing to stdout.
//
//	o, err := update.FromConfig(cfg.Update)       // ErrDisabled when off
//	rel, err := update.Check(ctx, o)               // nil, nil: up to date
//	if rel != nil {                                // offer rel.Version
//		path, err := update.Download(ctx, o, rel, dir)
//	}
//
// # The release feed
//
// A small JSON document (format 1), published beside the release's files:
//
//	{
//	  "format": 1,
//	  "version": "1.2.0",
//	  "published": "2026-05-01T12:00:00Z",
//	  "notes_url": "https://github.com/mcp-sandbox/mcp-sandbox/releases/tag/v1.2.0",
//	  "artifacts": [{
//	    "name": "mcp-sandbox_1.2.0_amd64.deb",
//	    "os": "linux", "arch": "amd64", "kind": "deb",
//	    "url": "mcp-sandbox_1.2.0_amd64.deb",
//	    "size": 9876543,
//	    "sha256": "<64 hex digits>",
//	    "signature": "<base64 ed25519 signature>"
//	  }]
//	}
//
// A url may be relative to the feed's own URL. Each artifact is signed on
// its own with the release key: the signature covers the product, the
// version, and the artifact's name, os, arch, kind, size and SHA-256 (see
// SignArtifact), so a feed cannot relabel an old file as a new version, and
// a file cannot be swapped without the key. Check verifies the signature of
// the artifact it offers before offering it; Download checks the size and
// SHA-256 of what arrives, and the signature again, before the file
// appears under its name. packaging/cmd/signrelease writes signed feeds.
//
// Feed and files must come over https; plain http is accepted only from a
// loopback address (tests, a local mirror).
//
// Imports: sandbox/buildinfo, sandbox/config
package update
