// Package pool is the engine's warm pool: per language it keeps a number of
// ready, unclaimed sandboxes made with the config's settings, hands one
// out when a request's settings match (never the same one twice), refills
// in the background with a bounded number of creations in flight and a
// back-off after failures, grows by one for each claim that finds none
// ready (a burst) and shrinks back once idle, drops what no longer fits
// (settings changed, too old, gone from outside, paused) and removes what
// it holds on Close.
//
// The pool knows neither containers nor sandboxes: the engine tells it
// what to hold (each language's settings key and a function that makes
// one), which containers still run, and how to remove one.
//
// Imports: sandbox/config
package pool
