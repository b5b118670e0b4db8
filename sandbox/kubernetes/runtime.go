package kubernetes

import (
	"context"
	"fmt"

	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

var _ backend.RuntimeChecker = (*Backend)(nil)

// RuntimeRegistered reports whether sandboxes can run on the runtime name:
// with runtime_class set, whether that class is name or runs the handler
// name (so "runsc" finds "gvisor", and docker.runtime = "auto" never asks
// for a runtime the configured class does not run); without it, whether
// the cluster has such a RuntimeClass.
func (b *Backend) RuntimeRegistered(ctx context.Context, name string) (bool, error) {
	if b.cfg.RuntimeClass != "" {
		rc, err := b.cs.runtimeClasses.Get(ctx, b.cfg.RuntimeClass, metav1.GetOptions{})
		if err != nil {
			return false, b.wrap("get runtime class "+b.cfg.RuntimeClass, err)
		}
		return rc.Name == name || rc.Handler == name, nil
	}
	rc, err := b.classForHandler(ctx, name)
	if err != nil {
		return false, err
	}
	if rc != nil {
		return true, nil
	}
	_, err = b.cs.runtimeClasses.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, b.wrap("get runtime class "+name, err)
}

// classForHandler returns a RuntimeClass whose handler is handler (the
// configured runtime_class first), or nil.
func (b *Backend) classForHandler(ctx context.Context, handler string) (*nodev1.RuntimeClass, error) {
	list, err := b.cs.runtimeClasses.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, b.wrap("list runtime classes", err)
	}
	var found *nodev1.RuntimeClass
	for i := range list.Items {
		rc := &list.Items[i]
		if rc.Handler != handler {
			continue
		}
		if rc.Name == b.cfg.RuntimeClass {
			return rc, nil
		}
		if found == nil {
			found = rc
		}
	}
	return found, nil
}

// runtimeClass decides a new pod's runtimeClassName and the OCI runtime it
// runs (for the runtime annotation). The engine's runtime "" is the
// configured runtime_class (or the cluster's default); an explicit
// "runsc" or "runc" is honoured by the configured class when its handler
// is that runtime, else by a class that runs it, and is an error when the
// cluster has none: never a silent fall back to a weaker runtime.
func (b *Backend) runtimeClass(ctx context.Context, runtime string) (class, handler string, err error) {
	if runtime == "" {
		if b.cfg.RuntimeClass == "" {
			return "", "", nil
		}
		rc, err := b.cs.runtimeClasses.Get(ctx, b.cfg.RuntimeClass, metav1.GetOptions{})
		if err != nil {
			return "", "", fmt.Errorf("kubernetes: runtime_class %q: %w", b.cfg.RuntimeClass, err)
		}
		return rc.Name, rc.Handler, nil
	}
	if b.cfg.RuntimeClass != "" {
		rc, err := b.cs.runtimeClasses.Get(ctx, b.cfg.RuntimeClass, metav1.GetOptions{})
		if err != nil {
			return "", "", fmt.Errorf("kubernetes: runtime_class %q: %w", b.cfg.RuntimeClass, err)
		}
		if rc.Handler != runtime {
			return "", "", fmt.Errorf("kubernetes: runtime %q asked, but runtime_class %q runs %q", runtime, rc.Name, rc.Handler)
		}
		return rc.Name, rc.Handler, nil
	}
	rc, err := b.classForHandler(ctx, runtime)
	if err != nil {
		return "", "", err
	}
	switch {
	case rc != nil:
		return rc.Name, rc.Handler, nil
	case runtime == "runc":
		// The cluster's default runtime is runc's kind on every
		// distribution; an explicit runc asks for nothing stronger.
		return "", "", nil
	}
	return "", "", fmt.Errorf("kubernetes: runtime %q asked, but the cluster has no RuntimeClass running it (set [kubernetes] runtime_class)", runtime)
}
