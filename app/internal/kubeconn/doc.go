// Package kubeconn builds the Kubernetes backend from the config file's
// [kubernetes] table. It is the one constructor of the server and every
// command (app/cli), the tray's and the window's too (they read a cluster
// through the server binary, app/internal/backendrpc, and link no
// Kubernetes client), so that all of them reach the same cluster and
// namespace, and a context that does not answer is an error naming it
// for each: never Docker in its place.
//
// Imports: sandbox/config, sandbox/kubernetes
package kubeconn
