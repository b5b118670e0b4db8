// Command signrelease makes and checks the signed release feed that the
// tray's update check reads (format: see package app/update). It is a
// release tool, run from a checkout; it is not shipped in any package.
//
//	go run ./packaging/cmd/signrelease keygen -o release.key     # once; prints the public key
//	go run ./packaging/cmd/signrelease feed -key release.key -version 1.2.0 \
//	    -notes https://github.com/mcp-sandbox/mcp-sandbox/releases/tag/v1.2.0 \
//	    -o dist/feed.json dist/mcp-sandbox_1.2.0_amd64.deb …
//	go run ./packaging/cmd/signrelease verify -pub BASE64 -dir dist dist/feed.json
//
// The signing key is base64 of an ed25519 seed; -key-env VAR reads it from
// the environment instead of a file (a CI secret). The public key goes in
// official builds with -X …/app/update.DefaultPublicKey=, or in the config
// file's update.public_key.
//
// Imports: app/update
package main
