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
//
// # Rules
//
//   - Each CONNECT and each plain request, even the next one on a
//     keep-alive connection, is judged on its own host; hop-by-hop and
//     Proxy-* headers are not passed on.
//   - Names are compared after lower-casing, IDNA (UTS 46) mapping and
//     removing one trailing dot; a name whose last label is numeric must be
//     an IPv4 literal.
//   - Cloud metadata addresses (169.254.169.254, 169.254.170.2,
//     fd00:ec2::254, 100.100.100.200, 192.0.0.192, 168.63.129.16), reserved
//     ones, and NAT64/6to4 forms of the refused ranges are refused too.
//   - A request head over 32 KiB is answered 431, one slower than 10 s 408,
//     a connection beyond network.max_connections 503, a refused host 403
//     with one line naming it and the entry that would allow it.
//   - Each tunnel, plain request and connection refused before a request is
//     a [Record]: the caller writes it to the audit log (tool "network"; at
//     most 64 lines at once per sandbox, then one each 10 s, the rest
//     counted in the next line) and keeps the sandbox's bytes and its last
//     32 refused hosts ([Stats]).
//
// Imports: sandbox/printable
package netproxy
