// Package codestyle holds tests of the house style that span the whole
// module (its tests only; it has no API): no function outside tests
// longer than 80 lines.
//
// Imports: none
package codestyle
