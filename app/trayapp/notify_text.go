package trayapp

import "unicode/utf16"

// Field sizes of NOTIFYICONDATAW, the Windows notification-area balloon
// (which Windows 10 and 11 show as a toast): szInfoTitle and szInfo, in
// UTF-16 units with the terminating NUL.
const (
	balloonTitleLen = 64
	balloonBodyLen  = 256
)

// balloonText fits a notification into the balloon's fields: UTF-16,
// NUL-terminated, a text too long cut at a whole character and ended
// with "…" (so nothing is cut silently), NULs in it turned into spaces
// (a NUL would end the text early).
func balloonText(title, body string) (t [balloonTitleLen]uint16, b [balloonBodyLen]uint16) {
	putUTF16(t[:], title)
	putUTF16(b[:], body)
	return t, b
}

// putUTF16 writes s into dst as UTF-16 with a terminating NUL; when it
// does not fit, as much as fits with "…" after it.
func putUTF16(dst []uint16, s string) {
	clear(dst)
	room := len(dst) - 1 // the NUL
	n := 0
	var c [2]uint16
	for _, r := range s {
		if r == 0 {
			r = ' '
		}
		u := utf16.AppendRune(c[:0], r)
		if n+len(u) > room {
			// Too long: end with "…", taking back whole characters (a
			// surrogate pair is one) until it fits.
			for n > room-1 {
				if n >= 2 && utf16.IsSurrogate(rune(dst[n-1])) {
					n -= 2
				} else {
					n--
				}
			}
			dst[n] = '…'
			dst[n+1] = 0
			return
		}
		n += copy(dst[n:], u)
	}
	dst[n] = 0
}
