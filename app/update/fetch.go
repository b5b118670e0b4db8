package update

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo"
)

// newClient is the default HTTP client: bounded connection set-up, no
// overall timeout (a download may take long; contexts bound each call),
// and redirects only to URLs checkURL accepts.
func newClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("too many redirects")
			}
			_, err := checkURL(req.URL.String(), nil)
			return err
		},
	}
}

// checkURL resolves raw against base (when not nil) and accepts https, or
// http to a loopback host.
func checkURL(raw string, base *url.URL) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFeed, err)
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	switch {
	case u.Scheme == "https" && u.Host != "":
		return u, nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return u, nil
	}
	return nil, fmt.Errorf("%w: %s (https only, or http to a loopback address)", ErrInsecure, u.Redacted())
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// get starts a GET of u and returns the response when its status is 200.
func get(ctx context.Context, c *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrFetch, u, err)
	}
	req.Header.Set("User-Agent", "mcp-sandbox-tray/"+buildinfo.Version+" ("+runtime.GOOS+"/"+runtime.GOARCH+")")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrFetch, u, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("%w %s: %s", ErrFetch, u, resp.Status)
	}
	return resp, nil
}

// fetchSmall reads the whole body of u, refusing more than limit bytes.
func fetchSmall(ctx context.Context, c *http.Client, u string, limit int64) ([]byte, error) {
	resp, err := get(ctx, c, u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrFetch, u, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrFeed, limit)
	}
	return b, nil
}
