// Package printable makes a string from outside (an MCP client's name, a
// label read from the engine, an image name) safe to put in a label, a log
// line, a terminal or a window: control and format characters are dropped
// (an ESC sequence, a newline or a tab cannot forge a row or restyle a
// terminal, a bidi override cannot reorder one), invalid UTF-8 becomes
// U+FFFD, and the length is capped in runes.
//
//	name := printable.Clean(info.ClientInfo.Name, printable.NameMax)
//
// Imports: none
package printable
