// Package tomlscan finds the statements of a TOML document and where each
// stands in the text, so that a program can change one table or one value
// by splicing text and leave the rest of a person's file (comments, order,
// formatting) as they wrote it. go-toml decodes and encodes but drops
// comments; its unstable parser, which this package is built on, reports
// the pieces with their offsets.
//
//	stmts, err := tomlscan.Scan(src)
//	for _, s := range stmts {
//		if s.Kind == tomlscan.KeyValue && s.Table == "limits" && s.Key == "memory" {
//			src = slices.Concat(src[:s.ValStart], []byte(`"1g"`), src[s.ValEnd:])
//		}
//	}
//
// Imports: none
package tomlscan
