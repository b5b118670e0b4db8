package install

import (
	"strings"
	"testing"
)

// Output of real failed installs. pipOffline and npmOffline were taken
// from the test images run with --network none, pipProxy and npmProxy
// from the install helper, whose proxy could not reach the index; the
// others are what pip and npm print for a name the index lacks and for a
// build that fails.
const (
	pipOffline = `WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f8e59177250>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/requests/
WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f8e59185510>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/requests/
ERROR: Could not find a version that satisfies the requirement requests (from versions: none)
ERROR: No matching distribution found for requests
`
	pipNoHost = `WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPConnection object at 0x7f0c1b2a4d10>: Failed to establish a new connection: [Errno -2] Name or service not known')': /simple/six/
ERROR: Could not find a version that satisfies the requirement six (from versions: none)
ERROR: No matching distribution found for six
`
	pipProxy = `WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ProxyError('Cannot connect to proxy.', OSError('Tunnel connection failed: 403 Forbidden'))': /simple/six/
ERROR: No matching distribution found for six
`
	pipUntrusted = `WARNING: The repository located at 10.0.0.1 is not a trusted or secure host and is being ignored. If this repository is available via HTTPS we recommend you use HTTPS instead, otherwise you may silence this warning and allow it anyway with '--trusted-host 10.0.0.1'.
ERROR: Could not find a version that satisfies the requirement six (from versions: none)
ERROR: No matching distribution found for six
`
	pipMissing = `ERROR: Could not find a version that satisfies the requirement no-such-package-xyz (from versions: none)
ERROR: No matching distribution found for no-such-package-xyz
`
	pipBuild = `  error: subprocess-exited-with-error

  × Building wheel for pycairo (pyproject.toml) did not run successfully.
  │ exit code: 1
  ╰─> [12 lines of output]
      ../cairo/meson.build:31:12: ERROR: Dependency "cairo" not found, tried pkgconfig
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
  ERROR: Failed building wheel for pycairo
Failed to build pycairo
ERROR: Could not build wheels for pycairo, which is required to install pyproject.toml-based projects
`
	npmOffline = `npm ERR! code EAI_AGAIN
npm ERR! syscall getaddrinfo
npm ERR! errno EAI_AGAIN
npm ERR! request to https://registry.npmjs.org/lodash failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org
`
	npmNoHost = `npm error code ENOTFOUND
npm error syscall getaddrinfo
npm error errno ENOTFOUND
npm error network request to https://registry.npmjs.org/lodash failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org
`
	npmRefused = `npm ERR! code ECONNREFUSED
npm ERR! syscall connect
npm ERR! errno ECONNREFUSED
npm ERR! FetchError: request to http://127.0.0.1:9/lodash failed, reason: connect ECONNREFUSED 127.0.0.1:9
`
	npmProxy = `npm ERR! code E502
npm ERR! 502 Bad Gateway - GET https://no-such-registry.invalid/lodash

npm ERR! A complete log of this run can be found in:
npm ERR!     /cache/npm/_logs/2026-11-28T17_48_35_613Z-debug-0.log
`
	npmMissing = `npm ERR! code E404
npm ERR! 404 Not Found - GET https://registry.npmjs.org/no-such-package-xyz - Not found
npm ERR! 404
npm ERR! 404  'no-such-package-xyz@*' is not in this registry.
`
	npmBuild = `npm ERR! code 1
npm ERR! path /workspace/node_modules/bcrypt
npm ERR! command failed
npm ERR! command sh -c node-pre-gyp install --fallback-to-build
npm ERR! gyp ERR! stack Error: not found: make
`
)

// TestInstallFailureNote: each failed install's output is told as its
// cause, a connection error before the "No matching distribution" pip
// prints after it.
func TestInstallFailureNote(t *testing.T) {
	const network, name, build = "could not be reached", "has no such package", "failed to build"
	for _, tc := range []struct {
		name, manager, output, want, cause string
	}{
		{"pip offline", "pip", pipOffline, network, "Temporary failure in name resolution"},
		{"pip unknown index host", "pip", pipNoHost, network, "Name or service not known"},
		{"pip proxy refused", "pip", pipProxy, network, "ProxyError"},
		{"pip untrusted http index", "pip", pipUntrusted, network, "not a trusted or secure host"},
		{"pip missing name", "pip", pipMissing, name, ""},
		{"pip build failure", "pip", pipBuild, build, ""},
		{"npm offline", "npm", npmOffline, network, "EAI_AGAIN"},
		{"npm unknown registry host", "npm", npmNoHost, network, "ENOTFOUND"},
		{"npm registry refused", "npm", npmRefused, network, "ECONNREFUSED"},
		{"npm through the helper's proxy", "npm", npmProxy, network, "E502"},
		{"npm missing name", "npm", npmMissing, name, ""},
		{"npm build failure", "npm", npmBuild, build, ""},
		{"unknown", "pip", "Killed\n", "stderr says why", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := failureNote(tc.manager, tc.output, "/home/u/.config/mcp-sandbox/config.toml")
			if !strings.HasPrefix(got, "Nothing was installed") || !strings.Contains(got, tc.want) || !strings.Contains(got, tc.cause) {
				t.Errorf("note %q, want %q and %q", got, tc.want, tc.cause)
			}
			if tc.want == network {
				for _, w := range []string{"network.install_env", "config.toml", "copy_in", "within a second"} {
					if !strings.Contains(got, w) {
						t.Errorf("network note %q lacks %q", got, w)
					}
				}
			}
			if strings.Contains(got, "Installed by") {
				t.Errorf("failure note %q uses the success wording", got)
			}
		})
	}
}

func TestInstallFailureNoteProxy(t *testing.T) {
	pip := "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='evil.example', port=443): Max retries exceeded (Caused by ProxyError('Unable to connect to proxy', OSError('Tunnel connection failed: 403 Forbidden')))"
	if n := failureNote("pip", pip, "config.toml"); !strings.Contains(n, "reaches only pypi.org") || !strings.Contains(n, "network.install_env") {
		t.Errorf("note for a refused host: %q", n)
	}
}
