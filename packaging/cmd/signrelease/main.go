package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/update"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "signrelease:", err)
		os.Exit(1)
	}
}

const usage = "usage: signrelease keygen|pubkey|feed|verify [flags] (see -h of each)"

func run(args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("signrelease "+args[0], flag.ContinueOnError)
	switch args[0] {
	case "keygen":
		out := fs.String("o", "", "write the signing key here (mode 0600); it must not exist")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return keygen(*out)
	case "pubkey":
		keyFile, keyEnv := keyFlags(fs)
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		priv, err := loadKey(*keyFile, *keyEnv)
		if err != nil {
			return err
		}
		fmt.Println(base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)))
		return nil
	case "feed":
		keyFile, keyEnv := keyFlags(fs)
		version := fs.String("version", "", "the release's version (required)")
		notes := fs.String("notes", "", "URL of the release notes")
		base := fs.String("base-url", "", "prefix for each file's URL; empty: relative to the feed")
		out := fs.String("o", "", "write the feed here instead of stdout")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		priv, err := loadKey(*keyFile, *keyEnv)
		if err != nil {
			return err
		}
		f, err := makeFeed(priv, *version, *notes, *base, fs.Args(), time.Now().UTC())
		if err != nil {
			return err
		}
		return writeJSON(*out, f)
	case "verify":
		pub := fs.String("pub", "", "release public key, base64 (required)")
		dir := fs.String("dir", "", "also check each file's size and SHA-256 in this directory")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("verify takes one feed file")
		}
		return verify(*pub, fs.Arg(0), *dir)
	}
	return errors.New(usage)
}

func keyFlags(fs *flag.FlagSet) (file, env *string) {
	return fs.String("key", "", "file holding the signing key"),
		fs.String("key-env", "", "environment variable holding the signing key")
}

func keygen(out string) error {
	if out == "" {
		return errors.New("keygen needs -o FILE")
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, base64.StdEncoding.EncodeToString(priv.Seed())); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "signing key written to %s: keep it secret, keep a copy offline\n", out)
	fmt.Println(base64.StdEncoding.EncodeToString(pub))
	return nil
}

func loadKey(file, env string) (ed25519.PrivateKey, error) {
	switch {
	case file != "" && env != "":
		return nil, errors.New("give -key or -key-env, not both")
	case env != "":
		v := os.Getenv(env)
		if v == "" {
			return nil, fmt.Errorf("$%s is empty", env)
		}
		return update.ParsePrivateKey(v)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		return update.ParsePrivateKey(string(b))
	}
	return nil, errors.New("no signing key: give -key FILE or -key-env VAR")
}

// jsonBytes is the feed as written: indented, with a final newline.
func jsonBytes(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}

func writeJSON(out string, v any) error {
	b, err := jsonBytes(v)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

func verify(pubText, feedFile, dir string) error {
	pub, err := update.ParsePublicKey(pubText)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(feedFile)
	if err != nil {
		return err
	}
	f, err := update.ParseFeed(b)
	if err != nil {
		return err
	}
	if err := f.Verify(pub); err != nil {
		return err
	}
	if dir != "" {
		for _, a := range f.Artifacts {
			got, err := describe(filepath.Join(dir, a.Name))
			if err != nil {
				return err
			}
			if got.Size != a.Size || got.SHA256 != a.SHA256 {
				return fmt.Errorf("%s: size %d sha256 %s, the feed says %d %s", a.Name, got.Size, got.SHA256, a.Size, a.SHA256)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "%s: version %s, %d artifacts, all signatures valid\n", feedFile, f.Version, len(f.Artifacts))
	return nil
}
