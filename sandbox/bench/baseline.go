package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// dockerCLI runs the docker command-line client, as a person would.
type dockerCLI struct {
	path    string
	image   string
	runtime string // docker run's --runtime; empty: the engine's default
}

// findDocker returns the docker CLI: path if set, else docker on PATH,
// else /usr/local/bin/docker.
func findDocker(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	if p, err := exec.LookPath("docker"); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("/usr/local/bin/docker"); err == nil {
		return p, nil
	}
	return "", errors.New("the docker CLI is not on PATH (the baselines are docker commands)")
}

// run runs docker with args and returns its trimmed stdout.
func (d dockerCLI) run(ctx context.Context, args ...string) (string, error) {
	if d.runtime != "" && len(args) > 0 && args[0] == "run" {
		args = append([]string{"run", "--runtime", d.runtime}, args[1:]...)
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, d.path, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// The baselines use no network, like a sandbox (and so they run where
// Docker's bridge does not).

// runDetached is `docker run -d IMAGE sleep …`; it returns the container id.
func (d dockerCLI) runDetached(ctx context.Context, name string) (string, error) {
	args := []string{"run", "-d", "--network", "none"}
	if name != "" {
		args = append(args, "--name", name)
	}
	return d.run(ctx, append(args, d.image, "sleep", "86400")...)
}

// runOnce is `docker run --rm IMAGE python3 -c 'print(1)'`.
func (d dockerCLI) runOnce(ctx context.Context) error {
	return wantOne(d.run(ctx, "run", "--rm", "--network", "none", d.image, "python3", "-c", "print(1)"))
}

// exec is `docker exec C python3 -c 'print(1)'`.
func (d dockerCLI) exec(ctx context.Context, c string) error {
	return wantOne(d.run(ctx, "exec", c, "python3", "-c", "print(1)"))
}

func (d dockerCLI) remove(ctx context.Context, c string) error {
	_, err := d.run(ctx, "rm", "-f", c)
	return err
}

func wantOne(out string, err error) error {
	if err == nil && out != "1" {
		err = fmt.Errorf("printed %q, want 1", out)
	}
	return err
}

func randomName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
