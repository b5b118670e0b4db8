// Package kubeconn builds the Kubernetes backend from the config file's
// [kubernetes] table. It is the one constructor of the server and every
// command (app/cli) and of the tray and the window
// (app/internal/engineconn), so that all of them reach the same cluster
// and namespace, and a context that does not answer is an error naming
// it for each: never Docker in its place.
//
// Imports: sandbox/config, sandbox/kubernetes
package kubeconn
