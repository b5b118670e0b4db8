// Package netproxy is the server's side of a sandbox's allowlist network:
// an HTTP forward proxy for one client connection at a time, carried from
// the sandbox by whatever transport the caller has (the command agent's
// streams; a net.Conn in tests).
//
// The sandbox has no network. A program in it speaks to a proxy on its own
// loopback; each connection reaches Serve here, which reads a CONNECT
// host:port (TLS then passes through untouched) or an absolute-URI plain
// HTTP request, decides on that host alone, resolves the name once on the
// host and dials the address it checked, so a second lookup (DNS
// rebinding) cannot swap it. IP literals in any spelling and loopback,
// private, link-local, metadata, CGNAT, unique-local, multicast and
// unspecified addresses are refused unless an entry names that address
// and port exactly.
//
//	p := netproxy.New(netproxy.Options{
//		Entries: entries, // from ParseEntries
//		Audit:   func(r netproxy.Record) { log(r) },
//	})
//	go p.Serve(ctx, stream) // one call per accepted connection
//	fmt.Println(p.Stats())
package netproxy
