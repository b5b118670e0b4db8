/*
 * Test-only stand-in for Windows' bcryptprimitives.dll, which Wine 8 lacks.
 * Go 1.22 and later import ProcessPrng from it for crypto/rand and the
 * runtime's random seed, so no Go program starts under Wine 8 without it.
 * packaging/windows/test/wine.sh builds it with mingw into the test's own
 * Wine prefix. It is never shipped: Windows 10 and 11 have the real one.
 *
 * ProcessPrng fills the buffer from RtlGenRandom (advapi32's
 * SystemFunction036), the system's CSPRNG, in chunks of at most 1 MiB
 * (RtlGenRandom takes a ULONG length).
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
	while (size > 0) {
		ULONG n = size > (1u << 20) ? (1u << 20) : (ULONG)size;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		size -= n;
	}
	return TRUE;
}
