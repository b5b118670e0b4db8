package health

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/interp"
)

// LocalImage is one tag the engine has, for a person choosing an image.
type LocalImage struct {
	Ref  string // repository:tag
	Size int64  // bytes
}

// LocalImages lists the tagged images the engine has, sorted by name:
// those a language can use without a pull.
func LocalImages(ctx context.Context, cli *client.Client) ([]LocalImage, error) {
	list, err := cli.ImageList(ctx, image.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the engine's images: %w", err)
	}
	var out []LocalImage
	for _, s := range list {
		for _, ref := range s.RepoTags {
			if ref != "<none>:<none>" {
				out = append(out, LocalImage{Ref: ref, Size: s.Size})
			}
		}
	}
	slices.SortFunc(out, func(a, b LocalImage) int { return strings.Compare(a.Ref, b.Ref) })
	return out, nil
}

// TryImage says why code in language could not run in ref on this
// engine, by Check's rule (the image present, and the program run_code
// runs found in it by the same probe), or returns nil when it can. cfg
// gives the language's definition.
func TryImage(ctx context.Context, cli *client.Client, cfg *config.Config, language, ref string) error {
	l, ok := cfg.Language(language)
	if !ok {
		return fmt.Errorf("%s is not a configured language: reopen the window", language)
	}
	if _, err := cli.ImageInspect(ctx, ref); err != nil {
		return fmt.Errorf("%s is not on this engine (%v): choose another", ref, err)
	}
	program := interp.Program(l)
	if program == "" {
		return nil
	}
	be := docker.New(cli, slog.New(slog.DiscardHandler))
	if why, late := runProbe(ctx, be, ref, program); late {
		return fmt.Errorf("%s: %s — try again", ref, why)
	} else if why != "" {
		// runProbe speaks of "the image" (doctor names it beside): here
		// the image is the news.
		return fmt.Errorf("%s: %s — choose another", program, strings.Replace(why, "the image", ref, 1))
	}
	return nil
}
