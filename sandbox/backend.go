package sandbox

import "github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"

// The backend contract lives in sandbox/backend, which backends import
// without importing the engine; these aliases keep the engine's names.
type (
	Backend        = backend.Backend
	ContainerSpec  = backend.ContainerSpec
	ExecSpec       = backend.ExecSpec
	ExecStatus     = backend.ExecStatus
	ContainerInfo  = backend.ContainerInfo
	ContainerExit  = backend.ContainerExit
	VolumeInfo     = backend.VolumeInfo
	PathStat       = backend.PathStat
	HelperSpec     = backend.HelperSpec
	Usage          = backend.Usage
	PullProgress   = backend.PullProgress
	ImageInfo      = backend.ImageInfo
	Attacher       = backend.Attacher
	Process        = backend.Process
	RuntimeChecker = backend.RuntimeChecker
	Inspector      = backend.Inspector
	ArchReporter   = backend.ArchReporter
	Expirer        = backend.Expirer
)

// ErrFixedExpiry is backend.ErrFixedExpiry.
var ErrFixedExpiry = backend.ErrFixedExpiry

// Where a Usage's memory and CPU come from (Usage.Source), beside the
// engine's own ("").
const (
	UsageMetrics = backend.UsageMetrics
	UsageInPod   = backend.UsageInPod
)

// InstallCacheMount is where a sandbox holds its install cache, out of its
// own reach (see ContainerSpec.CacheUser).
const InstallCacheMount = backend.InstallCacheMount
